"""GitHub's refusals of a merge (405 on ``PUT /pulls/{n}/merge``), read into what magi does.

GitHub answers 405 for a race it will accept a moment later ("Base branch was modified"),
and for a repository rule that only a person, or time, can satisfy: a required approving
review, a required status check, a branch that must be up to date with its base, a merge
queue. One status, different next steps: this module reads GitHub's own message (the
only thing that tells them apart) into a ``Refusal`` and the words the PR is told.
Pure: the merge gate (``magi.github.gate``) asks and acts.

https://docs.github.com/en/rest/pulls/pulls#merge-a-pull-request
https://docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/managing-protected-branches/about-protected-branches
https://docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/managing-rulesets/available-rules-for-rulesets
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from magi.core.threads.posting import inert

__all__ = ["MERGE_TRIES", "Refusal", "Why", "read_refusal", "rules_ahead", "when_it_merges"]

MERGE_TRIES = 3  # a transient refusal is tried again, this many attempts in all


class Why(enum.Enum):
    """Why GitHub refused a merge."""

    RACE = "race"  # the base moved between GitHub's check and the merge: try again
    REVIEW = "review"  # a required approving review is missing: a person must review
    CHECKS = "checks"  # a required status check is missing or not green: it may come
    BEHIND = "behind"  # the branch must be up to date with the base: a rebase
    QUEUE = "queue"  # the branch merges only through its merge queue
    OTHER = "other"


# GitHub's own words (lower-cased) for each; a ruleset's refusal starts "Repository rule
# violations found" and then names the rule in the same words as branch protection.
_SAID = (
    (Why.RACE, ("base branch was modified",)),
    (Why.QUEUE, ("merge queue",)),
    (Why.REVIEW, ("approving review", "review is required", "review required")),
    (Why.BEHIND, ("not up to date with the base branch",)),
    (Why.CHECKS, ("required status check",)),
)


@dataclass(frozen=True)
class Refusal:
    """What GitHub's refusal means: why, whether to try again, and what the PR is told."""

    why: Why
    retry: bool
    message: str


def read_refusal(message: str) -> Refusal:
    """The refusal GitHub's 405 ``message`` is (its words are quoted inert: a ruleset's
    name or a check's name is someone's text)."""
    said = message.lower()
    why = next((w for w, needles in _SAID if any(n in said for n in needles)), Why.OTHER)
    quoted = inert(" ".join(message.split()))
    return Refusal(why, why is Why.RACE, _words(why, quoted))


def _words(why: Why, quoted: str) -> str:
    if why is Why.REVIEW:
        return (
            f"GitHub requires an approving review before this merges ({quoted}): a review "
            "from someone with write access is required; magi merges when it arrives if the "
            "`merge` still stands. magi cannot approve its own pull request."
        )
    if why is Why.CHECKS:
        return (
            f"a check this branch's rules require is missing or not green ({quoted}). magi "
            "tries again when a check finishes, if the `merge` still stands."
        )
    if why is Why.BEHIND:
        return (
            f"this branch's rules require it to be up to date with the base ({quoted}). magi "
            "rebases it; a rebase that keeps the same patch keeps the approval."
        )
    if why is Why.QUEUE:
        return (
            f"this branch merges only through its merge queue ({quoted}). A writer can add "
            "the pull request to the queue on GitHub (the merge box's `Merge when ready`)."
        )
    if why is Why.RACE:
        return (
            f"the base kept moving while merging ({quoted}). The approval stands: magi tries "
            "again when GitHub next says something about this pull request."
        )
    return f"GitHub refused the merge: {quoted}"


REVIEW_NEXT = (
    "a review from someone with write access is required; magi merges when it arrives if "
    "the `merge` still stands (magi cannot approve its own pull request)"
)


def rules_ahead(rules: Sequence[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """What a branch's rules (``(type, parameters)`` as GitHub lists them) require beyond
    green checks, each with who acts; the checks themselves magi's gate waits for already.
    https://docs.github.com/en/rest/repos/rules#get-rules-for-a-branch"""
    out: list[str] = []
    for kind, params in rules:
        if kind == "pull_request" and int(params.get("required_approving_review_count") or 0):
            n = int(params["required_approving_review_count"])
            out.append(f"{n} approving review{'s' if n > 1 else ''}: {REVIEW_NEXT}")
        elif kind == "required_status_checks" and params.get(
            "strict_required_status_checks_policy"
        ):
            out.append("a branch up to date with the base: magi rebases it when the base moves")
        elif kind == "merge_queue":
            out.append(
                "the merge queue: this branch merges only through it; magi adds the pull "
                "request to it once every check is green and answers the queue's `magi` check"
            )
    return list(dict.fromkeys(out))


def when_it_merges(rules: Sequence[tuple[str, Mapping[str, Any]]] | None) -> str:
    """The approval reply's promise: only what magi can keep. ``None``: the rules could not
    be read (classic branch protection, an older GitHub Enterprise Server)."""
    if rules is None:
        return "magi merges once every check is green and this branch's rules allow it"
    ahead = rules_ahead(rules)
    if not ahead:
        return "magi merges once every check is green"
    return (
        "this branch's rules stand before the merge: "
        + "; ".join(ahead)
        + ". magi merges when they are met and every check is green"
    )
