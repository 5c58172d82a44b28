"""The winner's road on record: review rounds, their findings, e2e per round, the gate, merge.

Each field carries one meaning (seed 003). A round records the seats it expected and the
seats that answered, so a silent seat never reads as a clean pass; an e2e that was put off
is ``deferred``, never an empty green; ``progressed`` is what git measured, never what the
fixer said; the gate says it ran even with zero commands; operator fixes (``magi fix``) live
apart from the rounds, so a reviewer's own severity is never rewritten.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CheckResult",
    "E2eResult",
    "FindingRecord",
    "FixReport",
    "Gate",
    "MergeRecord",
    "OperatorFix",
    "Rejected",
    "Review",
    "ReviewRound",
    "ReviewSeat",
]

SeatStatus = Literal["pending", "ok", "timeout", "error", "quota", "invalid", "skipped"]


class _Rec(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class FindingRecord(_Rec):
    """One finding, with the id magi gave it (``R<round>-<reviewer>-<n>``), never the agent."""

    id: str
    round: int
    seat: str  # review-1 ...
    severity: Literal["blocking", "minor"]
    title: str
    file: str | None = None
    line: int | None = None
    detail: str = ""


class ReviewSeat(_Rec):
    """One reviewer seat in one round: who sat, and whether it answered."""

    seat: str
    agent: str  # never shown to another seat; for the report and stats
    status: SeatStatus = "pending"
    error: str = ""


class Rejected(_Rec):
    id: str
    reason: str


class FixReport(_Rec):
    """What the fixer said (adopted / rejected by id) and what git measured (progressed)."""

    seat: str  # impl-<winner> (continuing its conversation) or fix
    agent: str
    status: SeatStatus = "pending"
    asked: list[str] = Field(default_factory=list)  # the finding ids it was given
    adopted: list[str] = Field(default_factory=list)
    rejected: list[Rejected] = Field(default_factory=list)
    head_before: str | None = None
    head_after: str | None = None
    progressed: bool = False  # a new commit whose tree differs from head_before's
    rescued: bool = False  # uncommitted work committed by magi under the neutral identity
    error: str = ""


class E2eResult(_Rec):
    """verify.e2e on one commit, or the record that it was put off (never read as green)."""

    deferred: bool = False
    head: str | None = None  # the commit checked (None only when deferred)
    at: datetime | None = None
    passed: bool | None = None  # None when deferred
    exit_code: int | None = None
    timed_out: bool = False
    commands: list[str] = Field(default_factory=list)
    tail: str = ""
    duration_s: float = 0.0


class ReviewRound(_Rec):
    round: int  # 1-based
    head: str  # the exact commit the reviewers saw
    seats: list[ReviewSeat] = Field(default_factory=list)
    findings: list[FindingRecord] = Field(default_factory=list)
    e2e: E2eResult | None = None  # None: not reached yet
    fix: FixReport | None = None  # None: not needed, or not reached yet
    progressed: bool | None = None  # None: no fix ran this round
    closed: bool = False  # every node of the round has recorded its part

    @property
    def expected(self) -> list[str]:
        return [s.seat for s in self.seats]

    @property
    def answered(self) -> list[str]:
        return [s.seat for s in self.seats if s.status == "ok"]

    @property
    def missing(self) -> list[str]:
        return [s.seat for s in self.seats if s.status != "ok"]


class Review(_Rec):
    """The loop on the winner: its rounds and how it ended."""

    label: str  # the winning candidate's label
    branch: str
    rounds: list[ReviewRound] = Field(default_factory=list)
    outcome: Literal["clean", "rounds", "stagnant", "incomplete", "skipped"] | None = None
    reason: str | None = None


class CheckResult(_Rec):
    command: str
    exit_code: int | None
    timed_out: bool = False
    tail: str = ""
    duration_s: float = 0.0


class Gate(_Rec):
    """verify.gate on the final head. ``ran`` is true even with zero commands configured."""

    ran: bool = False
    head: str | None = None
    at: datetime | None = None
    commands: list[str] = Field(default_factory=list)
    results: list[CheckResult] = Field(default_factory=list)
    passed: bool | None = None


class MergeRecord(_Rec):
    mode: Literal["none", "local", "pr"]
    # "closed": the pull request was closed unmerged (mode "pr"; written by the App)
    result: Literal["printed", "merged", "blocked", "closed"]
    commit: str | None = None  # the squash commit on the base branch
    base: str | None = None
    pr: int | None = None  # mode "pr": the pull request that landed or closed
    head: str | None = None  # mode "pr": its head when it merged or closed
    base_moved: bool = False  # the base had moved since the run started: rebased first
    command: str | None = None  # the exact command printed for mode = none
    detail: str = ""  # git's words when a rebase did not apply
    at: datetime | None = None


class OperatorFix(_Rec):
    """One ``magi fix RUN ID...``: the findings copied verbatim, and the fixer's report."""

    at: datetime
    findings: list[FindingRecord]
    report: FixReport
