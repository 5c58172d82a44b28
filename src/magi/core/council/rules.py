"""The council's counting rules: weights, grouping by meaning, debate limits, verdicts.

This is the contract of decision mode, in code so that no agent can miscount, skip a
seat or lose a suggested change (seed 002: a prompt-driven orchestrator drifts).

**Weights.** Every seated seat has a weight (1 to 100). The total is the sum over the
whole panel: a seat that failed, timed out, gave an invalid answer or abstained counts
zero *and stays in the total*, so a failure can never make a minority look like a
majority.

**Grouping.** Positions reach the clerk as ``P1``, ``P2`` ... without their seats. The
clerk's grouping is used only when it places every label exactly once; otherwise (no
clerk, a failed clerk, an invalid answer) every position stands alone. Code never guesses
a merge: when unsure, positions are different (the cost is one debate round; the reverse
silently discards a disagreement).

**Passing.** A position passes when its supporting weight is at least ``threshold`` x
the total weight and strictly more than any other position's (a tie passes nothing, it
goes to debate). The weights decide, and nothing else (seed 002): seats weighted 80, 10,
10 with threshold 0.5 pass the 80 seat's position alone, because that is what weighting a
seat 80 means. Seed 001's "two supporters" rule was written for three equal sages, where
the threshold and "strictly more" already give the same answer (two of three); a panel
that wants it on top of the weights sets ``min_supporters = 2``. One precondition stays:
at least two seats' answers were counted, or no council spoke at all.

**Debate.** Only when nothing passed: at most two debate rounds with three or more seats
answering, one with two, never more than configured. Each recipient sees the others as
Sage A, Sage B ... in panel order, never by agent.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from magi.errors import ExitCode

__all__ = [
    "CHECK_CONCLUSION",
    "EXIT_CODES",
    "MAX_DEBATE_ROUNDS",
    "Count",
    "PanelSeat",
    "PositionTally",
    "Verdict",
    "change_outcome",
    "check_conclusion",
    "count_positions",
    "debate_limit",
    "degrade",
    "detect_language",
    "exit_code",
    "grouping",
    "item_labels",
    "sage_aliases",
    "seat_name",
]

Verdict = Literal["passed", "conditional", "rejected", "no_consensus", "inconclusive", "no_council"]
MAX_DEBATE_ROUNDS = 2

# The check run a PR carries. A required check passes on success, neutral or skipped
# (https://docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/
# managing-protected-branches/about-protected-branches#require-status-checks-before-merging),
# so only "passed" is success and nothing is neutral. A council that decided nothing (no
# consensus, no quorum) or approved with conditions hands the PR back to a person:
# action_required blocks like failure but says "look", not "rejected"; its details_url is
# the matrix comment (https://docs.github.com/en/rest/checks/runs#create-a-check-run).
# A council that rejected, or never sat, is failure.
CHECK_CONCLUSION: dict[str, str] = {
    "passed": "success",
    "conditional": "action_required",
    "rejected": "failure",
    "no_consensus": "action_required",
    "inconclusive": "action_required",
    "no_council": "failure",
}
EXIT_CODES: dict[str, ExitCode] = {
    "passed": ExitCode.OK,
    "conditional": ExitCode.CONDITIONAL,
    "rejected": ExitCode.FAILED,
    "no_consensus": ExitCode.NO_CONSENSUS,
    "inconclusive": ExitCode.NO_CONSENSUS,
    "no_council": ExitCode.CONFIG,
}


def check_conclusion(verdict: str) -> str:
    """The ``magi council`` check-run conclusion of a verdict: success only when it passed."""
    return CHECK_CONCLUSION[verdict]


def exit_code(verdict: str) -> int:
    return EXIT_CODES[verdict]


@dataclass(frozen=True)
class PanelSeat:
    """One seat of a panel: who sits, how much its support weighs, its perspective."""

    seat: str  # sage-1 ...: the name every record and prompt uses
    agent: str  # never shown to another seat
    weight: int = 1
    personality: str | None = None
    veto: bool = False


def seat_name(index: int) -> str:
    return f"sage-{index + 1}"


def degrade(
    panel: Sequence[PanelSeat], missing: Mapping[str, str]
) -> tuple[list[PanelSeat], list[str], str | None]:
    """(seats that can sit, notes for the matrix, the reason there is no council or None).

    ``missing`` maps an agent id to why it cannot sit (its CLI is not on PATH...). Two seats
    make a two-seat council, with a note; one or none is no council.
    """
    seated = [s for s in panel if s.agent not in missing]
    notes = [
        f"{s.seat} ({s.agent}) cannot sit: {missing[s.agent]}" for s in panel if s not in seated
    ]
    if len(seated) >= 2:
        if len(seated) == 2:
            notes.append("two-seat council: 2-0 passes; a split gets one debate round")
        return seated, notes, None
    if len(panel) < 2:
        return seated, notes, f"the panel has {len(panel)} seat(s); a council needs at least two"
    lost = "; ".join(f"{s.agent}: {missing[s.agent]}" for s in panel if s.agent in missing)
    return seated, notes, f"only {len(seated)} of {len(panel)} seats can sit ({lost})"


def item_labels(prefix: str, count: int) -> list[str]:
    return [f"{prefix}{i + 1}" for i in range(count)]


def grouping(labels: Sequence[str], groups: Sequence[Sequence[str]] | None) -> list[list[str]]:
    """The clerk's groups when they partition ``labels`` exactly, else every label alone.

    Groups come back in label order (by their first member), members in label order.
    """
    order = {label: i for i, label in enumerate(labels)}
    alone = [[label] for label in labels]
    if groups is None:
        return alone
    flat = [label for g in groups for label in g]
    # Same length and same set: every label placed, none twice, nothing unknown.
    if any(not g for g in groups) or len(flat) != len(labels) or set(flat) != set(labels):
        return alone
    tidy = [sorted(g, key=order.__getitem__) for g in groups]
    return sorted(tidy, key=lambda g: order[g[0]])


@dataclass(frozen=True)
class PositionTally:
    """One position and who holds it."""

    seats: tuple[str, ...]  # in panel order
    weight: int
    text: str  # the first holder's wording


@dataclass(frozen=True)
class Count:
    positions: tuple[PositionTally, ...]  # heaviest first, ties in panel order
    total: int  # the whole panel's weight, failures included
    threshold: float
    answered: tuple[str, ...]  # seats whose position was counted
    passed: PositionTally | None
    reason: str


def count_positions(
    panel: Sequence[PanelSeat],
    positions: Mapping[str, str],
    groups: Sequence[Sequence[str]],
    threshold: float,
    min_supporters: int = 1,
) -> Count:
    """Count ``positions`` (seat -> text, answering seats only) grouped by seat into ``groups``."""
    weight = {s.seat: s.weight for s in panel}
    order = {s.seat: i for i, s in enumerate(panel)}
    total = sum(weight.values())
    answered = tuple(sorted(positions, key=order.__getitem__))
    tallies = []
    for group in groups:
        seats = tuple(sorted((s for s in group if s in positions), key=order.__getitem__))
        if seats:
            tallies.append(PositionTally(seats, sum(weight[s] for s in seats), positions[seats[0]]))
    tallies.sort(key=lambda t: (-t.weight, order[t.seats[0]]))
    need = Fraction(str(threshold)) * total
    passed: PositionTally | None = None
    if len(answered) < 2:
        reason = f"{len(answered)} seat(s) answered; a council needs two answers to count"
    elif not tallies or tallies[0].weight < need:
        reason = f"no position reached {_share(need, total)} of the weight"
    elif len(tallies[0].seats) < min_supporters:
        reason = (
            f"the heaviest position has {len(tallies[0].seats)} supporter(s); the panel "
            f"asks for {min_supporters} (min_supporters)"
        )
    elif len(tallies) > 1 and tallies[1].weight == tallies[0].weight:
        reason = f"two positions tie at {tallies[0].weight} of {total}"
    else:
        passed = tallies[0]
        reason = f"passed with {passed.weight} of {total} weight (needs {_share(need, total)})"
    return Count(tuple(tallies), total, threshold, answered, passed, reason)


def _share(need: Fraction, total: int) -> str:
    value = float(need)
    return f"{value:g} of {total}"


def debate_limit(answering: int, configured: int) -> int:
    """How many debate rounds may run: two with three or more seats, one with two."""
    if answering < 2:
        return 0
    return max(0, min(configured, MAX_DEBATE_ROUNDS if answering >= 3 else 1))


def sage_aliases(recipient: str, seats: Sequence[str], alias: str = "Sage") -> dict[str, str]:
    """How ``recipient`` sees the other seats: ``Sage A``, ``Sage B`` ... in panel order."""
    others = [s for s in seats if s != recipient]
    return {s: f"{alias} {chr(ord('A') + i)}" for i, s in enumerate(others)}


def change_outcome(
    panel: Sequence[PanelSeat], adopt: Mapping[str, bool], threshold: float
) -> Literal["adopted", "rejected"]:
    """A suggested change is adopted when its adopting weight reaches the threshold."""
    total = sum(s.weight for s in panel)
    yes = sum(s.weight for s in panel if adopt.get(s.seat) is True)
    return "adopted" if yes >= Fraction(str(threshold)) * total and yes > 0 else "rejected"


def detect_language(text: str) -> str:
    """``ja`` when the text has kana or CJK ideographs, else ``en``."""
    for ch in text:
        name = unicodedata.name(ch, "")
        if name.startswith(("HIRAGANA", "KATAKANA", "CJK UNIFIED IDEOGRAPH")):
            return "ja"
    return "en"
