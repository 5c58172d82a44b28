"""The council record: everything a council did, in the same store as a competition's runs.

``kind = "council"`` tells it apart from a competition ``Run``. Its conversations, turns,
redactions, events and timings use the competition's own types, so the seat machinery and
the audit trail are the same. Each council answer is stored per (phase, round, seat) as the
validated answer itself, which is what lets a resumed council skip finished seats.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from magi.errors import StateError
from magi.model.run import RECORD_KINDS, Record, SeatState, Task

if TYPE_CHECKING:
    from magi.state.store import Store

RECORD = "run.json"

__all__ = [
    "ChangeRecord",
    "CouncilAnswer",
    "CouncilRun",
    "CouncilSeat",
    "EvidenceRecord",
    "PositionGroup",
    "ResearchItem",
    "ReviewRecord",
    "RoundTally",
    "is_council",
    "load_council",
]

Mode = Literal["decision", "research", "review"]
# "conditional": a review approved with conditions; it does not pass until they are met.
Verdict = Literal["passed", "conditional", "rejected", "no_consensus", "inconclusive", "no_council"]


class _Rec(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class CouncilSeat(_Rec):
    """A panel seat as the run started with it (personality text copied, not referenced)."""

    seat: str  # sage-1 ...
    agent: str
    weight: int
    personality: str | None = None
    personality_text: str | None = None
    veto: bool = False
    seated: bool = True  # False: it could not sit (why in ``absent``)
    absent: str | None = None


class EvidenceRecord(_Rec):
    name: str
    source: str  # the path it was read from
    sha256: str  # of exactly the text every seat received
    original_sha256: str  # of the file as read, before redaction
    chars: int


class CouncilAnswer(_Rec):
    """One seat's answer in one phase and round; ``data`` is the validated answer."""

    phase: str  # ask, debate, clerk, research, deliberate, review
    round: int = 0
    seat: str
    status: SeatState
    error: str | None = None
    data: dict[str, Any] | None = None


class PositionGroup(_Rec):
    seats: list[str]
    weight: int
    text: str


class RoundTally(_Rec):
    round: int
    groups: list[PositionGroup]
    total: int
    passed: int | None = None  # index into groups
    grouped_by: Literal["clerk", "alone"] = "alone"  # "alone": no valid clerk grouping
    reason: str = ""


class ChangeRecord(_Rec):
    """A suggested change: raised once, put to every seat in the next round, never dropped."""

    id: str  # S1 ...
    round: int  # the round that raised it
    seat: str
    text: str
    votes: dict[str, bool] = Field(default_factory=dict)
    reasons: dict[str, str] = Field(default_factory=dict)
    outcome: Literal["adopted", "rejected", "open"] = "open"


class ResearchItem(_Rec):
    id: str  # C1 ...
    claims: list[dict[str, str]]  # seat, claim, evidence, source
    supporters: list[str]
    outcome: Literal["adopted", "conditional", "rejected", "unverified"]
    note: str = ""
    conflict: str = ""  # a detail the cluster's findings disagree on, as the clerk noted it
    verdicts: dict[str, list[str]] = Field(default_factory=dict)  # seat -> [verdict, reason]
    missing: list[str] = Field(default_factory=list)  # judges that gave no verdict


class ReviewRecord(_Rec):
    tier: str
    approve: int
    reject: int
    counted: list[str]
    abstained: list[str]
    vetoed_by: list[str] = Field(default_factory=list)
    ignored_vetoes: list[str] = Field(default_factory=list)
    dissent: list[str] = Field(default_factory=list)
    reason: str = ""
    # Both added later; an older record reads truly by these defaults: it allowed no
    # CONDITIONAL vote, and it needed two readable votes at every tier.
    conditions: list[str] = Field(default_factory=list)  # "sage-2: <condition>"
    quorum: int = 2  # readable votes the tier needed


class CouncilRun(Record):
    """A council: its panel as it started, every answer, every count, the verdict."""

    KIND: ClassVar[str] = "council"
    kind: Literal["council"] = "council"
    mode: Mode
    question: Task
    language: str = "en"
    panel: str = "default"
    threshold: float = 0.5
    min_supporters: int = 1  # the panel's; 1: the weights alone decide
    rounds: int = 1  # debate rounds at most, as configured
    risk: str = "medium"
    clerk: str | None = None  # the clerk's agent
    panel_seats: list[CouncilSeat] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    evidence: list[EvidenceRecord] = Field(default_factory=list)
    answers: list[CouncilAnswer] = Field(default_factory=list)
    tallies: list[RoundTally] = Field(default_factory=list)
    debate_rounds: int = 0  # debate rounds that ran
    changes: list[ChangeRecord] = Field(default_factory=list)
    research: list[ResearchItem] = Field(default_factory=list)
    review: ReviewRecord | None = None
    verdict: Verdict | None = None
    position: str | None = None

    def answer(self, phase: str, round_no: int, seat: str) -> CouncilAnswer | None:
        for a in self.answers:
            if a.phase == phase and a.round == round_no and a.seat == seat:
                return a
        return None

    def seated(self) -> list[CouncilSeat]:
        return [s for s in self.panel_seats if s.seated]


RECORD_KINDS[CouncilRun.KIND] = CouncilRun


def load_council(store: Store, run_id: str) -> CouncilRun:
    """The council record ``run_id``; StateError when it is another kind."""
    rec = store.load(run_id)
    if not isinstance(rec, CouncilRun):
        raise StateError(f"run {run_id} is a {rec.kind}, not a council")
    return rec


def is_council(store: Store, run_id: str) -> bool:
    """Whether the record ``run_id`` is a council's (False for a competition or no record)."""
    try:
        data = json.loads((store.run_dir(run_id) / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("kind") == "council"
