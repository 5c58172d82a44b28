"""Landing decisions: from a magi PR's state, the next step (wait, fix, rebase, merge, hold).

Pure: the App gathers the facts (head and base, checks and statuses, reviews, GitHub's
mergeable flags, the rounds spent, the approval) and this module answers with one
``Step`` and the words for the PR. The order is the one a careful person follows: a
closed PR is done; a person's decision (``magi:conflict``, ``magi:held``, a blocked
round) is never overridden; red checks or requested changes get a fix round while rounds
remain and a hold after; a base that conflicts goes to the fixer once per head (a fix
round with the base merged in), a base that moved gets a rebase; then the merge gate of
``magi.core.threads.approval`` decides, with or without a ``merge`` comment (``land_approval``).
Nothing here merges what is unknown, and nothing force-merges.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from magi.core.threads.approval import Check, Outcome, PullFacts, decide
from magi.core.threads.posting import code

HELD = "magi:held"
CONFLICT = "magi:conflict"
BLOCKED = "magi:blocked"
STOPS = frozenset({HELD, CONFLICT, BLOCKED})
# GitHub's mergeable_state values that mean "the base moved under the branch".
# https://docs.github.com/en/graphql/reference/enums#mergestatestatus
BEHIND = frozenset({"behind"})
DIRTY = frozenset({"dirty"})


class Step(enum.Enum):
    """What landing does next."""

    DONE = "done"  # merged or closed: fold
    OFF = "off"  # [graph] land = false
    STOPPED = "stopped"  # a stop label is on: a person decides
    WAIT = "wait"  # the next event will tell
    FIX = "fix"  # dispatch a fix round
    REBASE = "rebase"  # dispatch a rebase
    HOLD = "hold"  # out of rounds: say what fails, label magi:held
    MERGE = "merge"


@dataclass(frozen=True)
class Review:
    """One submitted review: who, and its state (APPROVED, CHANGES_REQUESTED, COMMENTED...)."""

    login: str
    state: str


@dataclass(frozen=True)
class LandFacts:
    """A magi PR as landing sees it."""

    pull: PullFacts
    checks: Sequence[Check] = ()
    reviews: Sequence[Review] = ()
    mergeable_state: str | None = None
    labels: frozenset[str] = frozenset()
    rounds_used: int = 0
    land: bool = True
    land_approval: bool = True
    land_rounds: int = 4
    approved_sha: str | None = None  # the pending approval's SHA, if any
    required: Sequence[str] = ()
    conflict: bool = False  # magi's rebase of this head stopped at a conflict
    conflict_tried: bool = False  # a fix round was already dispatched for a conflict here


@dataclass(frozen=True)
class Plan:
    """The step, a stable reason code (for reply-once keys), the words, what it is about."""

    step: Step
    reason: str
    message: str = ""
    names: tuple[str, ...] = field(default=())


def changes_requested(reviews: Sequence[Review]) -> tuple[str, ...]:
    """Reviewers whose latest deciding review requests changes (comments do not decide)."""
    last: dict[str, str] = {}
    for r in reviews:
        state = r.state.upper()
        if state in {"APPROVED", "CHANGES_REQUESTED", "DISMISSED"}:
            last[r.login] = state
    return tuple(sorted(login for login, s in last.items() if s == "CHANGES_REQUESTED"))


def red_checks(checks: Sequence[Check], required: Sequence[str] = ()) -> tuple[str, ...]:
    """Names of finished checks that are not green (only the required ones, if named)."""
    return tuple(
        c.name for c in checks if c.done and not c.green and (not required or c.name in required)
    )


def _names(names: Sequence[str]) -> str:
    return ", ".join(code(n) for n in names)


def held_back(*, land: bool, labels: frozenset[str], reviews: Sequence[Review]) -> str:
    """Why a person's stop keeps magi from adding the PR back to a merge queue, or "".

    The stops ``plan`` never overrides (land off, a stop label) and a request for changes
    (anyone's, unlike landing, which asks who may write: here a reader's review errs on the
    side of not adding back): magi re-enqueues only what landing would still merge without
    a fix round.
    """
    if not land:
        return "`[graph] land` is off"
    stops = sorted(labels & STOPS)
    if stops:
        return f"it is labeled `{stops[0]}`"
    asked = changes_requested(reviews)
    if asked:
        return f"changes were requested by {', '.join('@' + a for a in asked)}"
    return ""


def plan(f: LandFacts, now: datetime) -> Plan:
    """The next landing step for the PR described by ``f``."""
    p = f.pull
    if p.merged or p.state != "open":
        return Plan(Step.DONE, "merged" if p.merged else "closed")
    if not f.land:
        return Plan(Step.OFF, "land-off")
    stops = sorted(f.labels & STOPS)
    if stops:
        return Plan(Step.STOPPED, stops[0].removeprefix("magi:"), f"labeled `{stops[0]}`")
    red = red_checks(f.checks, f.required)
    asked = changes_requested(f.reviews)
    if red or asked:
        what = []
        if red:
            what.append(f"these checks are red: {_names(red)}")
        if asked:
            what.append(f"changes were requested by {', '.join('@' + a for a in asked)}")
        said = "; ".join(what)
        if f.rounds_used >= f.land_rounds:
            return Plan(
                Step.HOLD,
                "out-of-rounds",
                f"magi spent its {f.land_rounds} fix rounds (`[graph] land_rounds`) and "
                f"{said}. The pull request stays open, labeled `{HELD}`; magi never "
                "force-merges. Fix it by hand, or raise the rounds and remove the label.",
                red,
            )
        return Plan(
            Step.FIX, "fix", f"fix round {f.rounds_used + 1} of {f.land_rounds}: {said}.", red
        )
    state = (f.mergeable_state or "").lower()
    conflicts = f.conflict or state in DIRTY or p.mergeable is False
    if conflicts and not f.conflict_tried and f.rounds_used < f.land_rounds:
        # Seed 000: the fixer that wrote the change is the seat best placed to resolve it.
        # Once per head: a second conflict, or a failed resolution, is a person's.
        return Plan(
            Step.FIX,
            "conflict",
            f"fix round {f.rounds_used + 1} of {f.land_rounds}: the changes conflict with "
            "the base; the fixer resolves the conflict in a clone with the base merged in.",
        )
    if state in BEHIND or conflicts:
        return Plan(Step.REBASE, "rebase", "the base moved: rebasing onto it.")
    if f.land_approval:
        if f.approved_sha is None:
            return Plan(Step.WAIT, "awaiting-approval", "waiting for a writer's `merge`.")
        approved = f.approved_sha
    else:
        approved = p.head_sha  # land_approval = false: chosen deliberately, green merges
    d = decide(p, approved, f.checks, now, required=f.required)
    if d.outcome is Outcome.MERGE:
        return Plan(Step.MERGE, "ok", d.message)
    return Plan(Step.WAIT, d.reason, d.message, d.names)


@dataclass(frozen=True)
class Carried:
    """What happens to a pending approval when the head moves, and what magi says."""

    kept: bool
    message: str


def approval_across(
    approved_sha: str, new_head: str, before_patch: str, after_patch: str, onto: str
) -> Carried:
    """The approval rule across a push: kept only when ``git patch-id --stable`` is unchanged.

    ``before_patch`` is the patch id of the approved head's diff against its base,
    ``after_patch`` that of the new head against the new base. An empty id (git gave
    none: an empty diff, or it could not be read) never keeps an approval.
    """
    if approved_sha == new_head:
        return Carried(True, "")
    if before_patch and before_patch == after_patch:
        return Carried(True, f"rebased onto `{onto[:12]}`, same patch, approval kept.")
    return Carried(False, "new commits since the approval: comment `merge` again.")
