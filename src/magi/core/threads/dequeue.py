"""A magi PR taken out of a merge queue: what GitHub's reason means, and what magi does.

Pure. GitHub sends ``pull_request`` ``dequeued`` with a ``reason`` from a closed list
(GitHub's webhook description, ``webhook-pull-request-dequeued``; the docs:
https://docs.github.com/en/webhooks/webhook-events-and-payloads#pull_request). Each
reason is one of four things:

- the queue merged it (``MERGE``, ``ALREADY_MERGED``): nothing; ``pull_request`` closed
  folds the run;
- the queue itself let go of it, not the change (``QUEUE_CLEARED``: the queue was reset;
  ``ROLL_BACK``: its group was rolled back; ``CI_TIMEOUT``: the queue's checks did not
  report in time, as when no runner took them): added back once per head while the
  writer's ``merge`` still stands on it, since nobody decided against it;
- it conflicts with the base as the queue built it (``MERGE_CONFLICT``): landing plans it
  (``magi.core.threads.landing``: a conflict goes to the fixer once, then to a person);
- anything else needs a person and is said with the next step: a person removed it
  (``MANUAL``), the queue's checks failed on the merged result (``CI_FAILURE``: the
  combined code's, not a flake magi can tell), a rule or a tree GitHub could not satisfy
  (``BRANCH_PROTECTIONS``, ``GIT_TREE_INVALID``, ``INVALID_MERGE_COMMIT``), or a reason
  GitHub does not know (``UNKNOWN_REMOVAL_REASON``) or magi does not: never guessed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from magi.core.threads.posting import code

__all__ = ["Dequeued", "Next", "after_dequeue"]

MERGED = frozenset({"MERGE", "ALREADY_MERGED"})
TRANSIENT = frozenset({"QUEUE_CLEARED", "ROLL_BACK", "CI_TIMEOUT"})
CONFLICT = "MERGE_CONFLICT"
AGAIN = "comment `merge` again to add it to the queue once more"
_WORDS = {
    "QUEUE_CLEARED": "the merge queue was cleared",
    "ROLL_BACK": "the queue rolled its group back",
    "CI_TIMEOUT": "the queue's checks did not report in time",
    "MANUAL": "someone removed it from the merge queue",
    "CI_FAILURE": "the queue's checks failed on the merged result (the base with this "
    "pull request on it); see the checks of its `gh-readonly-queue/…` group",
    "BRANCH_PROTECTIONS": "a branch rule the queue could not satisfy",
    "GIT_TREE_INVALID": "GitHub could not build the merged tree",
    "INVALID_MERGE_COMMIT": "GitHub could not make the merge commit",
    CONFLICT: "it conflicts with the base as the queue built it",
}


class Next(enum.Enum):
    NOTHING = "nothing"  # merged: the closed event folds
    REQUEUE = "requeue"  # add it back (once per head)
    LAND = "land"  # plan landing: the conflict path
    SAY = "say"  # a person decides: say why and the next step


@dataclass(frozen=True)
class Dequeued:
    next: Next
    message: str = ""


def after_dequeue(reason: str, *, stands: bool, requeued: bool, held: str = "") -> Dequeued:
    """What to do after GitHub's ``dequeued`` with ``reason``.

    ``stands``: a writer's ``merge`` is pinned to the PR's current head. ``requeued``: magi
    already added this head back once after a removal. ``held``: why a person's stop keeps
    it out (``magi.core.threads.landing.held_back``), or "".
    """
    key = reason.strip().upper()
    if key in MERGED:
        return Dequeued(Next.NOTHING)
    why = _WORDS.get(key, f"GitHub gave the reason {code(reason or 'none', 80)}")
    said = f"Removed from the merge queue: {why}."
    if key == CONFLICT:
        return Dequeued(Next.LAND, f"{said} Landing takes it: the conflict goes to the fixer.")
    if key in TRANSIENT:
        if not stands:
            return Dequeued(Next.SAY, f"{said} No `merge` stands on this head: {AGAIN}.")
        if held:
            return Dequeued(
                Next.SAY,
                f"{said} magi does not add it back: {held}; once that is settled, {AGAIN}.",
            )
        if not requeued:
            return Dequeued(Next.REQUEUE, f"{said} The `merge` still stands: adding it back once.")
        return Dequeued(Next.SAY, f"{said} magi added this head back once already; {AGAIN}.")
    if key == "MANUAL":
        return Dequeued(Next.SAY, f"{said} magi leaves it out; {AGAIN}.")
    if key in _WORDS:
        return Dequeued(
            Next.SAY, f"{said} magi does not add it back by itself; once that is fixed, {AGAIN}."
        )
    return Dequeued(Next.SAY, f"{said} magi does not guess what that means; {AGAIN}.")
