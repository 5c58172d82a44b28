"""Review mode's rules: the four votes, risk tiers, the veto, quorum (seed 004).

**Votes.** APPROVE, REJECT, ABSTAIN, and CONDITIONAL: an approval that holds only once
the conditions the seat lists are met. CONDITIONAL counts as approving in every rule
below; a review that passes with any CONDITIONAL vote among those counted is
``conditional``, not ``passed``, and carries every condition (seat: condition). It does
not pass until a later review passes without conditions.

**Quorum.** Abstaining seats leave the denominator, and so do seats whose answer was lost
or could not be read (seed 004 reads an unparseable vote as an abstention). The readable
votes (APPROVE, REJECT, CONDITIONAL) must reach the tier's quorum (``[council]
review_quorum``: two at low and medium, three at high and critical by default), else
``inconclusive``. Seed 004's high and critical tiers are 3:0: two approvals and a third
seat that abstained, failed or answered unreadably are 2:0, which is not 3:0.

**Tiers**, on the weights of the votes that count:

- ``low``: approve weight strictly above reject weight (2:1 passes, 1:1 is rejected).
- ``medium``: as low, and the dissent is recorded.
- ``high``: unanimity: no counted seat rejects.
- ``critical``: unanimity, and every seat configured with the veto approved (a veto
  holder that abstained or was lost has not approved; one that voted CONDITIONAL has,
  with its conditions).

**Veto.** Valid only from a seat whose config gives it ``veto = true`` *and* whose own
answer carries a ``critical`` finding; a valid veto rejects at any tier, quorum or not.
Any other veto claim is ignored and recorded as ignored, with why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from magi.model.council import MIN_QUORUM

__all__ = ["MIN_QUORUM", "TIERS", "Ballot", "ReviewResult", "Tier", "review_verdict"]

Tier = Literal["low", "medium", "high", "critical"]
TIERS: tuple[Tier, ...] = ("low", "medium", "high", "critical")
Vote = Literal["APPROVE", "REJECT", "ABSTAIN", "CONDITIONAL"]
Outcome = Literal["passed", "conditional", "rejected", "inconclusive"]
_APPROVING = ("APPROVE", "CONDITIONAL")


@dataclass(frozen=True)
class Ballot:
    seat: str
    weight: int
    vote: Vote | None  # None: no usable answer
    may_veto: bool = False  # the config gives this seat the veto
    veto: bool = False  # the seat claimed it
    critical: bool = False  # its own answer has a critical finding
    conditions: tuple[str, ...] = ()  # a CONDITIONAL vote's conditions


@dataclass(frozen=True)
class ReviewResult:
    verdict: Outcome
    approve: int  # weight
    reject: int
    counted: tuple[str, ...]
    abstained: tuple[str, ...]  # abstentions and lost answers
    vetoed_by: tuple[str, ...] = ()
    ignored_vetoes: tuple[str, ...] = ()  # "sage-2: not a veto holder" ...
    dissent: tuple[str, ...] = ()  # seats on the losing side, recorded (always at medium)
    reason: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    conditions: tuple[str, ...] = ()  # "sage-2: <condition>", when conditional
    quorum: int = MIN_QUORUM  # readable votes this tier needed


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


def review_verdict(ballots: Sequence[Ballot], tier: Tier, quorum: int = MIN_QUORUM) -> ReviewResult:
    """The verdict of a review panel at ``tier`` needing ``quorum`` readable votes."""
    if tier not in TIERS:
        raise ValueError(f"unknown risk tier {tier!r}; known: {', '.join(TIERS)}")
    if quorum < MIN_QUORUM:
        raise ValueError(f"a review quorum is at least {MIN_QUORUM}, not {quorum}")
    counted = [b for b in ballots if b.vote in (*_APPROVING, "REJECT")]
    abstained = tuple(b.seat for b in ballots if b not in counted)
    approve = sum(b.weight for b in counted if b.vote in _APPROVING)
    reject = sum(b.weight for b in counted if b.vote == "REJECT")
    approvers = [b.seat for b in counted if b.vote in _APPROVING]
    rejecters = [b.seat for b in counted if b.vote == "REJECT"]
    conditional = [b for b in counted if b.vote == "CONDITIONAL"]
    vetoed, ignored = _veto_checks(ballots)

    def result(
        verdict: Outcome,
        reason: str,
        dissent: Sequence[str] = (),
        notes: Sequence[str] = (),
    ) -> ReviewResult:
        conditions = (
            tuple(f"{b.seat}: {c}" for b in conditional for c in b.conditions)
            if verdict == "conditional"
            else ()
        )
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
            conditions=conditions,
            quorum=quorum,
        )

    with_conditions = f", {len(conditional)} with conditions" if conditional else ""
    figures = f"{len(approvers)}:{len(rejecters)}{with_conditions} (weight {approve}:{reject})"
    if vetoed:
        return result(
            "rejected", f"vetoed by {', '.join(vetoed)} for a critical finding", approvers
        )
    if len(counted) < quorum:
        why = (
            f"{len(counted)} readable vote(s) of {len(ballots)} seat(s); {tier} risk needs "
            f"{quorum} (abstentions and lost or unreadable answers do not count)"
        )
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
        missing = [b.seat for b in holders if b.vote not in _APPROVING]
        if not holders:
            notes.append("no seat holds the veto; unanimity alone decided")
        elif missing:
            ok = False
            rule = "unanimity plus the veto holder's approval"
            notes.append(f"the veto holder {', '.join(missing)} did not approve")
        else:
            rule = "unanimity plus the veto holder's approval"
    verdict: Outcome = "rejected"
    if ok:
        verdict = "conditional" if conditional else "passed"
    reason = f"{verdict} {figures} at {tier} risk ({rule})"
    if verdict == "conditional":
        n = sum(len(b.conditions) for b in conditional)
        reason += f"; it passes once its {n} condition(s) are met and a new review says so"
    if notes:
        reason += "; " + "; ".join(notes)
    return result(verdict, reason, rejecters if ok else approvers, notes)
