"""The run record: everything a run did, as written to ``runs/<id>/run.json``.

Each field carries one meaning (seed 003 is the history of what happened when a field
carried two). ``SCHEMA`` is bumped whenever a field changes meaning; older records go
through named migrations in ``state.migrations`` or fail loudly, naming both versions.
A committed JSON-Schema snapshot (tests) makes a silent change to this file fail a test.
"""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA = 1


class _Rec(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class RunStatus(enum.StrEnum):
    CREATED = "created"
    PREPARING = "preparing"
    IMPLEMENTING = "implementing"
    VERIFYING = "verifying"
    JUDGING = "judging"
    DELIBERATING = "deliberating"
    VOTING = "voting"
    TALLYING = "tallying"
    FOLDING = "folding"
    READY = "ready"  # a winner is elected and folded; the review loop starts here
    VERIFIED_NOOP = "verified_noop"  # every candidate showed, with evidence, nothing is needed
    STALLED = "stalled"  # the panel collapsed on quota: resumable, refunded
    HELD = "held"  # a budget cap stopped it before a seat would start: resumable
    BLOCKED = "blocked"  # needs a person (review loop out of rounds, protected path, ...)
    FAILED = "failed"
    MERGED = "merged"

    @property
    def finished(self) -> bool:
        return self in _FINISHED

    @property
    def resumable(self) -> bool:
        return not self.finished


_FINISHED = {
    RunStatus.READY,
    RunStatus.VERIFIED_NOOP,
    RunStatus.FAILED,
    RunStatus.MERGED,
    RunStatus.BLOCKED,
}

SeatState = Literal["pending", "ok", "timeout", "error", "quota", "invalid", "skipped"]


class Redaction(_Rec):
    """A secret removed from text before an agent saw it (the secret itself is never stored)."""

    where: str  # "task", "prompt:judge", ...
    kind: str  # "github_token", "private_key", "password", ...
    count: int = 1


class Task(_Rec):
    original: str  # exactly as given; never shown to an agent
    cleaned: str  # invisible/bidi characters and HTML comments removed, secrets redacted
    source: str = "cli"  # "cli", "file:<path>", "issue:<n>"
    removed: list[str] = Field(default_factory=list)  # what cleaning removed, described
    redactions: list[Redaction] = Field(default_factory=list)


class Usage(_Rec):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None


class Turn(_Rec):
    """One agent invocation, with where its prompt and reply are stored."""

    seat: str
    node: str
    turn: int
    agent: str
    status: SeatState
    started_at: datetime
    duration_s: float
    session_id: str | None = None
    prompt_artifact: str | None = None  # relative to the run directory
    reply_artifact: str | None = None  # the reply text magi read
    raw_artifact: str | None = None  # the CLI's raw stdout and stderr, as captured (capped)
    error: str | None = None
    usage: Usage = Field(default_factory=Usage)
    reask: bool = False  # the one re-ask for a malformed structured answer


class Seat(_Rec):
    """A seat's conversation. Keyed by seat name, never by agent id."""

    name: str  # impl-B, judge-2, review-1, fix
    agent: str
    session_id: str | None = None  # the live CLI conversation, when the CLI reported one
    failover_from: list[str] = Field(default_factory=list)  # agents that lost the seat first


class FileStat(_Rec):
    path: str
    added: int | None  # None for binary files (numstat prints "-")
    deleted: int | None


class Verification(_Rec):
    """verify.e2e run in one worktree."""

    passed: bool
    commands: list[str]
    exit_code: int | None
    timed_out: bool = False
    tail: str = ""  # the last lines of combined output, capped
    head: str | None = None  # the commit that was checked
    duration_s: float = 0.0


class Leak(_Rec):
    """An author-identifying term found in candidate material."""

    label: str
    where: str  # "patch", "commit message", "summary", "file name"
    term: str
    action: Literal["warned", "redacted", "failed"]


class Candidate(_Rec):
    label: str
    seat: str  # impl-<label>
    agent: str  # never shown to a judge; revealed in the report after the tally
    branch: str  # magi/<run>/<label>
    worktree: str | None = None  # None once folded
    status: SeatState = "pending"
    head: str | None = None
    files: list[FileStat] = Field(default_factory=list)
    commits: int = 0
    summary: str = ""  # the implementer's last reply, trimmed
    verified_noop: bool | None = None  # None: never claimed
    noop_evidence: str | None = None
    rescued: bool = False  # uncommitted work committed under the neutral identity
    verification: Verification | None = None
    violations: list[str] = Field(default_factory=list)  # git config/hook tampering, restored
    protected_changed: list[str] = Field(default_factory=list)
    disqualified: str | None = None  # why, when it may not win

    @property
    def produced(self) -> bool:
        return bool(self.files)


class JudgeSeat(_Rec):
    seat: str  # judge-1 ...
    agent: str
    order: list[str]  # the presentation order of labels in this judge's packet


class Ranking(_Rec):
    """A first judgement or a deliberation turn."""

    seat: str
    status: SeatState
    ranking: list[str] = Field(default_factory=list)
    text: str = ""  # rationale (judgement) or argument (deliberation)
    round: int = 0  # 0 for the first judgement, 1.. for deliberation rounds


class Vote(_Rec):
    seat: str
    status: SeatState
    vote: str | None = None
    rationale: str = ""


class CountedVote(_Rec):
    seat: str
    label: str
    source: Literal["vote", "first_ranking"]


class Tally(_Rec):
    winner: str | None
    counts: dict[str, int] = Field(default_factory=dict)
    counted: list[CountedVote] = Field(default_factory=list)
    judges: int  # configured panel size (0 when uncontested)
    answered: int  # judges whose vote or first ranking could be counted
    quorum: bool
    uncontested: bool = False  # a single viable candidate: no judge sat
    tie_break: str | None = None  # the rule that decided, and why, when there was a tie
    reason: str = ""


class NodeTiming(_Rec):
    started_at: datetime
    finished_at: datetime | None = None
    seconds: float | None = None


class Event(_Rec):
    at: datetime
    node: str
    message: str
    level: Literal["info", "warn", "error"] = "info"


class Run(_Rec):
    schema_version: int = Field(SCHEMA, alias="schema")
    id: str
    created_at: datetime
    repo: str
    base: str
    base_sha: str | None = None
    seed: int
    status: RunStatus = RunStatus.CREATED
    reason: str | None = None  # why it ended as it did, in a sentence
    task: Task
    config: dict[str, object] = Field(default_factory=dict)  # the resolved config it ran with
    worktree_root: str | None = None
    labels: list[str] = Field(default_factory=list)
    candidates: list[Candidate] = Field(default_factory=list)
    judges: list[JudgeSeat] = Field(default_factory=list)
    judge_skipped: bool = False  # judging skipped on purpose (uncontested), not "not yet"
    judgements: list[Ranking] = Field(default_factory=list)
    deliberation: list[Ranking] = Field(default_factory=list)
    deliberated: bool = False  # the deliberate node ran (or decided no split: see events)
    votes: list[Vote] = Field(default_factory=list)
    tally: Tally | None = None
    folded: bool = False
    seats: dict[str, Seat] = Field(default_factory=dict)
    turns: list[Turn] = Field(default_factory=list)
    leaks: list[Leak] = Field(default_factory=list)
    redactions: list[Redaction] = Field(default_factory=list)
    timings: dict[str, NodeTiming] = Field(default_factory=dict)
    events: list[Event] = Field(default_factory=list)

    model_config = ConfigDict(extra="forbid", validate_assignment=True, populate_by_name=True)

    def candidate(self, label: str) -> Candidate:
        for c in self.candidates:
            if c.label == label:
                return c
        raise KeyError(label)
