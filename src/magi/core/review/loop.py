"""The review loop's decisions: finding ids, which findings are open, and when the loop ends.

Ids are ``R<round>-<reviewer>-<n>``, assigned here in the order a reviewer listed its
findings, never taken from an agent: the fixer's adoption report is keyed by them, which is
what makes reviewer precision a measurement. A finding is closed once a fixer (a round's or
an operator's ``magi fix``) adopted or rejected it with a reason, and stays closed, since
the reports are stored. A finding the fixer passed over is superseded by the next round's
review of the new head: the reviewers see the changed tree and raise it again if it stands.

After each round ``decide`` says whether the loop goes on, ends clean (no blocking finding
open, e2e green on the exact head that was reviewed, the panel complete enough), or ends
blocked: out of rounds, stagnant (the fixer produced no new tree), or short of reviewers
under ``incomplete_review = "block"``. A round a seat never answered is never clean under
``block``; under ``warn`` it gates on those who answered (at least one must have).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from magi.core.text.answers import Finding
from magi.model.review import FindingRecord, FixReport, OperatorFix, Review, ReviewRound

__all__ = [
    "Decision",
    "closed_ids",
    "decide",
    "defer_e2e",
    "finding_id",
    "follow_ups",
    "green_on_head",
    "normalise_title",
    "number_findings",
    "open_blocking",
    "reviewed_enough",
    "reviewer_agents",
    "reviewer_number",
    "same_find",
    "unique_findings",
]

Incomplete = Literal["block", "warn"]
NEAR_LINES = 5  # "same file within five lines" counts as the same find


def finding_id(round_no: int, reviewer: int, n: int) -> str:
    if min(round_no, reviewer, n) < 1:
        raise ValueError(f"finding ids count from 1, got R{round_no}-{reviewer}-{n}")
    return f"R{round_no}-{reviewer}-{n}"


def reviewer_number(seat: str) -> int:
    """``review-3`` -> 3."""
    role, _, num = seat.rpartition("-")
    if role != "review" or not num.isdigit() or int(num) < 1:
        raise ValueError(f"not a reviewer seat: {seat!r}")
    return int(num)


def number_findings(round_no: int, seat: str, findings: Sequence[Finding]) -> list[FindingRecord]:
    """A reviewer's answer as records, numbered 1.. in the order it listed them."""
    reviewer = reviewer_number(seat)
    return [
        FindingRecord(
            id=finding_id(round_no, reviewer, n),
            round=round_no,
            seat=seat,
            severity=f.severity,
            title=f.title,
            file=f.file,
            line=f.line,
            detail=f.detail,
        )
        for n, f in enumerate(findings, start=1)
    ]


def _reports(review: Review, operator_fixes: Iterable[OperatorFix]) -> list[FixReport]:
    return [r.fix for r in review.rounds if r.fix is not None] + [o.report for o in operator_fixes]


def closed_ids(review: Review, operator_fixes: Iterable[OperatorFix] = ()) -> set[str]:
    """Ids some fixer adopted or rejected with a reason."""
    out: set[str] = set()
    for rep in _reports(review, operator_fixes):
        out.update(rep.adopted)
        out.update(r.id for r in rep.rejected)
    return out


def adopted_ids(review: Review, operator_fixes: Iterable[OperatorFix] = ()) -> set[str]:
    return {i for rep in _reports(review, operator_fixes) for i in rep.adopted}


def open_blocking(
    review: Review, operator_fixes: Iterable[OperatorFix] = (), *, upto: int | None = None
) -> list[FindingRecord]:
    """Blocking findings of the latest round (or round ``upto``) that nobody closed yet."""
    rounds = [r for r in review.rounds if upto is None or r.round <= upto]
    if not rounds:
        return []
    closed = closed_ids(review, operator_fixes)
    return [f for f in rounds[-1].findings if f.severity == "blocking" and f.id not in closed]


def reviewed_enough(rnd: ReviewRound, incomplete: Incomplete) -> bool:
    """Every expected seat answered, or (``warn``) at least one did."""
    if not rnd.missing:
        return True
    return incomplete == "warn" and bool(rnd.answered)


def green_on_head(rnd: ReviewRound) -> bool:
    """e2e ran (not deferred) on the exact commit the round reviewed, and passed."""
    e = rnd.e2e
    return e is not None and not e.deferred and e.passed is True and e.head == rnd.head


def defer_e2e(review: Review, *, max_rounds: int) -> bool:
    """Blocking findings remain and a later round can still re-check: e2e may wait."""
    rnd = review.rounds[-1]
    return bool(open_blocking(review)) and rnd.round < max_rounds


@dataclass(frozen=True)
class Decision:
    verdict: Literal["continue", "clean", "blocked"]
    outcome: Literal["clean", "rounds", "stagnant", "incomplete", "skipped"] | None
    reason: str


def _ids(findings: Sequence[FindingRecord]) -> str:
    return ", ".join(f.id for f in findings)


def _owed_a_tree(rnd: ReviewRound, rejected: set[str]) -> bool:
    """A fixer that rejected every finding it was given (e2e green or deferred) owes no commit.

    ``rejected``: ids any fixer rejected (the round's, or ``magi fix`` after a lost turn).
    """
    fix = rnd.fix
    if fix is None:
        return False
    red = rnd.e2e is not None and rnd.e2e.passed is False
    return red or bool(set(fix.asked) - rejected) or not fix.asked


def decide(
    review: Review,
    *,
    max_rounds: int,
    incomplete: Incomplete,
    operator_fixes: Iterable[OperatorFix] = (),
) -> Decision:
    """What the loop does after its latest round (a round still in progress: continue)."""
    if max_rounds == 0:
        return Decision("clean", "skipped", "graph.review_rounds = 0: review skipped")
    if not review.rounds or not review.rounds[-1].closed:
        return Decision("continue", None, "")
    rnd = review.rounds[-1]
    n = rnd.round
    open_ = open_blocking(review, operator_fixes)
    complete = reviewed_enough(rnd, incomplete)
    if not open_ and green_on_head(rnd) and complete and not rnd.progressed:
        gap = f"; {', '.join(rnd.missing)} never answered (warn)" if rnd.missing else ""
        return Decision("clean", "clean", f"round {n}: no blocking finding open, e2e green{gap}")
    rejected = {r.id for rep in _reports(review, operator_fixes) for r in rep.rejected}
    if rnd.fix is not None and not rnd.progressed and _owed_a_tree(rnd, rejected):
        return Decision(
            "blocked",
            "stagnant",
            f"round {n}: the fixer produced no new tree; stopping instead of spinning",
        )
    if n >= max_rounds:
        if open_:
            why = f"blocking findings still open: {_ids(open_)}"
        elif not green_on_head(rnd):
            why = "e2e is not green on the final head"
        elif not complete:
            return Decision(
                "blocked",
                "incomplete",
                f"review round {n} of {max_rounds} is incomplete: "
                f"{', '.join(rnd.missing)} never answered (incomplete_review = {incomplete})",
            )
        else:
            why = "the final fix was never reviewed"
        return Decision("blocked", "rounds", f"{max_rounds} review rounds used up; {why}")
    return Decision("continue", None, "")


def reviewer_agents(configured: Sequence[str], roster: Sequence[str], author: str) -> list[str]:
    """Reviewer seat i's agent: the winner's author is swapped out when another agent can sit.

    The substitute is the first roster agent that is neither the author nor already seated,
    then any non-author; with a roster of one, the author sits (there is nobody else).
    """
    out: list[str] = []
    for agent in configured:
        others = [a for a in roster if a != author]
        if agent != author or not others:
            out.append(agent)
            continue
        fresh = [a for a in others if a not in configured and a not in out]
        unseated = [a for a in others if a not in out]
        out.append((fresh or unseated or others)[0])
    return out


_NON_WORD = re.compile(r"[^0-9a-z]+")


def normalise_title(title: str) -> str:
    return _NON_WORD.sub(" ", title.lower()).strip()


def same_find(a: FindingRecord, b: FindingRecord) -> bool:
    """Same normalised title, or the same file within ``NEAR_LINES`` lines."""
    if normalise_title(a.title) == normalise_title(b.title):
        return True
    return (
        a.file is not None
        and a.file == b.file
        and a.line is not None
        and b.line is not None
        and abs(a.line - b.line) <= NEAR_LINES
    )


def unique_findings(rnd: ReviewRound) -> list[FindingRecord]:
    """Findings no other reviewer in the same round raised."""
    return [
        f
        for f in rnd.findings
        if not any(g.seat != f.seat and same_find(f, g) for g in rnd.findings)
    ]


def follow_ups(
    review: Review | None, operator_fixes: Iterable[OperatorFix] = ()
) -> list[FindingRecord]:
    """Minor findings nobody adopted: the report lists them so they outlive the run."""
    if review is None:
        return []
    adopted = adopted_ids(review, operator_fixes)
    return [
        f
        for r in review.rounds
        for f in r.findings
        if f.severity == "minor" and f.id not in adopted
    ]


def rate_limit_stall(rnd: ReviewRound, incomplete_review: str, run_id: str) -> str | None:
    """Why the run stalls in review round ``rnd`` (None: it goes on). Under
    ``incomplete_review = "block"`` a reviewer lost to a rate limit (after failover, if on)
    would block the run for good over something that passes: the round stays open and the
    run stops stalled; a resume asks only the seats that did not answer (those that did
    are not asked again; their finding ids stand). Under "warn" the round goes on with the
    reviewers that answered, as that setting says."""
    if incomplete_review != "block":
        return None
    lost = [s.seat for s in rnd.seats if s.status == "quota"]
    if not lost:
        return None
    return (
        f"review round {rnd.round}: {', '.join(lost)} lost to a rate limit; "
        f"`magi run --resume {run_id}` asks them again in this round"
    )
