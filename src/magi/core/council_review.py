"""Review mode's rules: APPROVE / REJECT / ABSTAIN, risk tiers, the veto, quorum (seed 004).

**Denominator.** Abstaining seats leave it, and so do seats whose answer was lost
(seed 004 reads an unparseable vote as an abstention). Fewer than two votes that are not
abstentions: ``inconclusive``.

**Tiers**, on the weights of the votes that count:

- ``low``: approve weight strictly above reject weight (2:1 passes, 1:1 is rejected).
- ``medium``: as low, and the dissent is recorded.
- ``high``: unanimity: no counted seat rejects.
- ``critical``: unanimity, and every seat configured with the veto approved (a veto
  holder that abstained or was lost has not approved).

**Veto.** Valid only from a seat whose config gives it ``veto = true`` *and* whose own
answer carries a ``critical`` finding; a valid veto rejects at any tier. Any other veto
claim is ignored and recorded as ignored, with why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["TIERS", "Ballot", "ReviewResult", "Tier", "review_verdict"]

Tier = Literal["low", "medium", "high", "critical"]
TIERS: tuple[Tier, ...] = ("low", "medium", "high", "critical")
Vote = Literal["APPROVE", "REJECT", "ABSTAIN"]


@dataclass(frozen=True)
class Ballot:
    seat: str
    weight: int
    vote: Vote | None  # None: no usable answer
    may_veto: bool = False  # the config gives this seat the veto
    veto: bool = False  # the seat claimed it
    critical: bool = False  # its own answer has a critical finding


@dataclass(frozen=True)
class ReviewResult:
    verdict: Literal["passed", "rejected", "inconclusive"]
    approve: int  # weight
    reject: int
    counted: tuple[str, ...]
    abstained: tuple[str, ...]  # abstentions and lost answers
    vetoed_by: tuple[str, ...] = ()
    ignored_vetoes: tuple[str, ...] = ()  # "sage-2: not a veto holder" ...
    dissent: tuple[str, ...] = ()  # seats on the losing side, recorded (always at medium)
    reason: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)


def _veto_checks(ballots: Sequence[Ballot]) -> tuple[list[str], list[str]]:
    valid, ignored = [], []
    for b in ballots:
        if not b.veto:
            continue
        if not b.may_veto:
            ignored.append(f"{b.seat}: the config gives it no veto")
        elif not b.critical:
            ignored.append(f"{b.seat}: a veto needs a critical finding of its own")
        else:
            valid.append(b.seat)
    return valid, ignored


def review_verdict(ballots: Sequence[Ballot], tier: Tier) -> ReviewResult:
    """The verdict of a review panel at ``tier`` (see the module docstring)."""
    if tier not in TIERS:
        raise ValueError(f"unknown risk tier {tier!r}; known: {', '.join(TIERS)}")
    counted = [b for b in ballots if b.vote in ("APPROVE", "REJECT")]
    abstained = tuple(b.seat for b in ballots if b not in counted)
    approve = sum(b.weight for b in counted if b.vote == "APPROVE")
    reject = sum(b.weight for b in counted if b.vote == "REJECT")
    approvers = [b.seat for b in counted if b.vote == "APPROVE"]
    rejecters = [b.seat for b in counted if b.vote == "REJECT"]
    vetoed, ignored = _veto_checks(ballots)

    def result(
        verdict: Literal["passed", "rejected", "inconclusive"],
        reason: str,
        dissent: Sequence[str] = (),
        notes: Sequence[str] = (),
    ) -> ReviewResult:
        return ReviewResult(
            verdict,
            approve=approve,
            reject=reject,
            counted=tuple(b.seat for b in counted),
            abstained=abstained,
            vetoed_by=tuple(vetoed),
            ignored_vetoes=tuple(ignored),
            dissent=tuple(dissent),
            reason=reason,
            notes=tuple(notes),
        )

    figures = f"{len(approvers)}:{len(rejecters)} (weight {approve}:{reject})"
    if vetoed:
        return result(
            "rejected", f"vetoed by {', '.join(vetoed)} for a critical finding", approvers
        )
    if len(counted) < 2:
        why = f"{len(counted)} counted vote(s); a review needs two that are not abstentions"
        return result("inconclusive", f"no quorum: {why}")
    if tier in ("low", "medium"):
        ok = approve > reject
        rule = "approve weight above reject weight"
    else:
        ok = reject == 0
        rule = "unanimity"
    notes: list[str] = []
    if ok and tier == "critical":
        holders = [b for b in ballots if b.may_veto]
        missing = [b.seat for b in holders if b.vote != "APPROVE"]
        if not holders:
            notes.append("no seat holds the veto; unanimity alone decided")
        elif missing:
            ok = False
            rule = "unanimity plus the veto holder's approval"
            notes.append(f"the veto holder {', '.join(missing)} did not approve")
        else:
            rule = "unanimity plus the veto holder's approval"
    verdict: Literal["passed", "rejected"] = "passed" if ok else "rejected"
    reason = f"{verdict} {figures} at {tier} risk ({rule})"
    if notes:
        reason += "; " + "; ".join(notes)
    return result(verdict, reason, rejecters if ok else approvers, notes)
