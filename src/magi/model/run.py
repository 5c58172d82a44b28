"""The run record: everything a run did, as written to ``runs/<id>/run.json``.

Each field carries one meaning (seed 003 is the history of what happened when a field
carried two). ``SCHEMA`` is bumped whenever a field changes meaning; older records go
through named migrations in ``state.migrations`` or fail loudly, naming both versions.
A committed JSON-Schema snapshot (tests) makes a silent change to this file fail a test.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from datetime import datetime
from typing import ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from magi.model.config import Config
from magi.model.landing import Landing
from magi.model.review import Gate, MergeRecord, OperatorFix, Review

# Schema 7 also reads records written before `[github] trusted_bots` and `workflow_changes`
# existed: a config without them trusted no bot and pushed no agent's workflow change
# (GitHub refused those pushes then), which is what their defaults say.
# It also reads records from before `Usage.models` and `[budget] run_minutes`/`prices`:
# a turn without `models` named no model to price (its tokens stay unpriced, as they were),
# and a budget without the new keys capped only the dollars CLIs reported, as it did.
# And records from before `questions` (magi ask): a run that could not ask asked nothing.
# And from before `handoff` and `handed_off` (stages on several runners): a run that could
# not be handed off waited for no runner; nor `Seat.session_host`: no runner was named;
# nor `fork`: no wave was forked; nor `fork_node`, `fork_id`: a forked wave was implement's,
# and its results carried no id either. Nor `Seat.session_total` (a CLI's running total of a
# conversation): a turn after it counts what the CLI reports, as every turn did then; nor
# `Seat.cli_version`: the versions were not read, which None says.
# And from before `[sandbox] read`: a jail that showed all of / read-only needed no more.
SCHEMA = 7


# The waves a staged job may fork across runners (``magi.graph.fork``): each asks its seats
# side by side, and what a seat's turn leaves is keyed by that seat alone (a reviewer's
# findings too: their ids carry its seat); a deliberation's fork is one judge's turn.
# (`fork_seats`, `fork_round` and `joined` are new with it: a record without them forked
# none, and joined none.)
ForkNode = Literal["implement", "judge", "deliberate", "vote", "review"]


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
    REVIEWING = "reviewing"
    TESTING = "testing"  # e2e on the winner's head
    FIXING = "fixing"
    GATING = "gating"
    MERGING = "merging"
    READY = "ready"  # reviewed, gated, waiting to be merged (merge.mode = none)
    INTERRUPTED = "interrupted"  # Ctrl-C, SIGTERM or SIGHUP: resumable
    VERIFIED_NOOP = "verified_noop"  # every candidate showed, with evidence, nothing is needed
    STALLED = "stalled"  # the panel collapsed on quota: resumable, refunded
    HELD = "held"  # a budget cap stopped it before a seat would start: resumable
    PARKED = "parked"  # stopped at a node boundary on request (`magi park`): resumable
    ASKING = "asking"  # parked on an agent's question nobody could answer mid-turn (a runner)
    HANDED_OFF = "handed_off"  # a seat's agent is logged in on another runner: resumable there
    BLOCKED = "blocked"  # needs a person (review loop out of rounds, protected path, ...)
    FAILED = "failed"
    MERGED = "merged"
    CLOSED = "closed"  # its pull request was closed unmerged (recorded by the App)

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
    RunStatus.CLOSED,
}

SeatState = Literal["pending", "ok", "timeout", "error", "quota", "invalid", "skipped"]


class Redaction(_Rec):
    """A secret removed from text before an agent saw it (the secret itself is never stored)."""

    where: str  # "task", "prompt:judge", ...
    kind: str  # "github_token", "private_key", "password", ...
    count: int = 1


class Task(_Rec):
    original: str  # as given, less the values of redacted secrets; never shown to an agent
    cleaned: str  # invisible/bidi characters and HTML comments removed, secrets redacted
    source: str = "cli"  # "cli", "file:<path>", "issue:<n>"
    removed: list[str] = Field(default_factory=list)  # what cleaning removed, described
    redactions: list[Redaction] = Field(default_factory=list)


class ModelTokens(BaseModel):
    """One model's tokens in a turn, split the way a price applies to them: uncached input,
    cached input, output (reasoning included), whatever the CLI's own counting."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: int = Field(0, ge=0)
    cached: int = Field(0, ge=0)
    output: int = Field(0, ge=0)

    def __add__(self, other: ModelTokens) -> ModelTokens:
        return ModelTokens(
            input=self.input + other.input,
            cached=self.cached + other.cached,
            output=self.output + other.output,
        )


class Usage(BaseModel):
    """Tokens and cost of a turn, as far as its CLI reported them (None: never reported,
    which must not read as zero). The one usage type: adapters build it, records keep it.

    ``cost_usd`` is only ever a CLI's own figure. ``models`` holds the same tokens by the
    model that spent them, where the CLI (or the agent's configured ``model``) names it: what
    ``magi.core.figures.pricing`` turns into an *estimated* cost when no cost was reported. Empty in
    records written before it existed: such a turn's tokens are simply not priced.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None
    models: dict[str, ModelTokens] = Field(default_factory=dict)

    def __add__(self, other: Usage) -> Usage:
        def add(a: float | None, b: float | None) -> float | None:
            return b if a is None else a if b is None else a + b

        models = dict(self.models)
        for name, tokens in other.models.items():
            models[name] = models[name] + tokens if name in models else tokens
        return Usage(
            input_tokens=_int(add(self.input_tokens, other.input_tokens)),
            output_tokens=_int(add(self.output_tokens, other.output_tokens)),
            cached_tokens=_int(add(self.cached_tokens, other.cached_tokens)),
            cost_usd=add(self.cost_usd, other.cost_usd),
            models=models,
        )

    def minus(self, before: Usage) -> Usage:
        """What was spent since ``before``, when both are a CLI's running totals of one
        conversation. A figure only one of them reports stays as reported (it errs high)."""

        def sub(a: float | None, b: float | None) -> float | None:
            return a if a is None or b is None else max(0.0, a - b)

        models = {
            name: ModelTokens(
                input=max(0, t.input - before.models[name].input),
                cached=max(0, t.cached - before.models[name].cached),
                output=max(0, t.output - before.models[name].output),
            )
            if name in before.models
            else t
            for name, t in self.models.items()
        }
        return Usage(
            input_tokens=_int(sub(self.input_tokens, before.input_tokens)),
            output_tokens=_int(sub(self.output_tokens, before.output_tokens)),
            cached_tokens=_int(sub(self.cached_tokens, before.cached_tokens)),
            cost_usd=sub(self.cost_usd, before.cost_usd),
            models=models,
        )


def _int(value: float | None) -> int | None:
    return None if value is None else int(value)


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
    failure: Literal["auth", "unreachable"] | None = None  # the agent, not the turn, failed
    # host:port of each connection the jail's egress proxy refused this turn (never a byte sent)
    refused: list[str] = Field(default_factory=list)


class SessionTotal(_Rec):
    """A CLI's running total of one conversation's usage, as it last reported it."""

    session_id: str
    usage: Usage


class Seat(_Rec):
    """A seat's conversation. Keyed by seat name, never by agent id."""

    name: str  # impl-B, judge-2, review-1, fix
    agent: str
    session_id: str | None = None  # the live CLI conversation, when the CLI reported one
    # The runner (GitHub's RUNNER_NAME) whose CLI holds that conversation: a stage that
    # lands there again goes on with it; any other sends the seat its full context.
    session_host: str | None = None
    # The running total of tokens the CLI last reported for ``session_total.session_id``
    # (codex reports a resumed thread's total, not the turn's): the next turn of that same
    # conversation counts the difference. Saved with the turn, so a resume after a kill
    # still subtracts from the last total recorded.
    session_total: SessionTotal | None = None
    # The version its agent's CLI gave (``claude --version`` ...) when the agent took the
    # seat (None: not read, or a kind with no version command): which CLIs an election
    # was held between, for `magi stats` to split by.
    cli_version: str | None = None
    failover_from: list[str] = Field(default_factory=list)  # agents that lost the seat first
    # What the guards found and undid after this seat's turns: refs moved outside its own
    # branch, recorded heads moved, the user's checkout touched (magi.graph.guard).
    violations: list[str] = Field(default_factory=list)


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
    head: str | None = None  # the commit that was checked (in a clean checkout of it)
    duration_s: float = 0.0
    # What the seat's own worktree held that no commit did: recorded, never run.
    dirty: list[str] = Field(default_factory=list)


class Leak(_Rec):
    """An author-identifying term found in candidate material."""

    label: str
    where: str  # "patch", "commit message", "summary", "file name"
    term: str
    action: Literal["warned", "redacted", "failed"]


class Jail(_Rec):
    """Which jail the run's agents had: the guarantee a reader of the record may rely on."""

    mode: Literal["bwrap", "off"]  # what ran: bubblewrap, or agents unjailed
    configured: Literal["auto", "bwrap", "off"]  # [sandbox] mode
    reason: str
    fix: str | None = None  # what to change so that bwrap can run, when it was blocked


class EditedTest(_Rec):
    """Lines a candidate removed or changed in a test file that existed at the base."""

    path: str
    removed: list[str] = Field(default_factory=list)  # capped; the first ones
    count: int = 0  # all removed lines
    deleted: bool = False  # the whole file


class Candidate(_Rec):
    """One competing implementation; its author is ``Record.seats[seat].agent`` (revealed
    in the report after the tally, never shown to a judge)."""

    label: str
    seat: str  # impl-<label>
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
    tests_changed: list[EditedTest] | None = None  # None: not scanned (before schema 3)
    # Why its worktree could not be committed from (deleted, unregistered, off its branch):
    # nothing was rescued; the branch holds only what the seat committed itself.
    sabotaged: str | None = None

    @property
    def produced(self) -> bool:
        return bool(self.files)

    @property
    def viable(self) -> bool:
        """May be judged: produced a change, was not disqualified, and was not cut off by
        quota."""
        return self.produced and self.disqualified is None and self.status in ("ok", "timeout")


class JudgeSeat(_Rec):
    """A judge's place on the panel; who sits in it is ``Record.seats[seat].agent``."""

    seat: str  # judge-1 ...
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


T = TypeVar("T", bound=BaseModel)


def upsert(items: list[T], item: T, key: Callable[[T], object]) -> list[T]:
    """``items`` with the entry whose key equals ``item``'s replaced by it (appended if new)."""
    k = key(item)
    return [*(x for x in items if key(x) != k), item]


class Process(_Rec):
    """A live agent or check process of the run (its group and session), for a resume to end.

    ``start`` is its start time in clock ticks since boot (``/proc/<pid>/stat``), so a pid
    reused by another process is never taken for it.
    """

    pid: int
    pgid: int
    sid: int
    start: int | None = None
    seat: str = ""
    turn: int = 0


class QuestionTurn(_Rec):
    """One turn of a question thread: what the agent asked, and the answer it got."""

    summary: str
    choices: list[str] = Field(default_factory=list)
    asked_at: datetime
    # The chosen choice, a person's words (``--say``: the agent may reply on the thread),
    # or magi's "decide yourself" (past ``[ask] max_per_run``, or nobody can answer).
    how: Literal["choice", "say", "decide"] | None = None
    answer: str | None = None
    answered_at: datetime | None = None


class Question(_Rec):
    """An agent's question to a person (``magi ask``), attributed to its seat, never an agent.

    ``open`` while the seat waits; ``unanswered`` when its turn ended before an answer;
    ``waiting`` when it was asked where nobody can answer mid-turn (a runner's agents job):
    the seat's turn ended, the run parked ``asking``, and the answer is the seat's next turn."""

    id: str  # what a person answers (unique in the run)
    box: str  # its folder in the seat's mailbox (what the agent's ``magi ask`` named)
    seat: str
    node: str
    turn: int
    label: str = ""
    status: Literal["open", "answered", "unanswered", "waiting"] = "open"
    turns: list[QuestionTurn] = Field(default_factory=list)

    @property
    def parked_on(self) -> bool:
        """The run waits on a person's answer to it (``waiting``, its last turn unanswered)."""
        return self.status == "waiting" and bool(self.turns) and self.turns[-1].how is None


class Record(_Rec):
    """What every kind of run holds: identity, status, the config it runs with, and the
    record of seats (conversations, turns, redactions, events, timings) that ``magi.seats``
    writes. A competition is a ``Run``; a council is ``magi.state.council.CouncilRun``."""

    KIND: ClassVar[str] = ""
    schema_version: int = Field(SCHEMA, alias="schema")
    id: str
    kind: str
    created_at: datetime
    status: RunStatus = RunStatus.CREATED
    reason: str | None = None  # why it ended as it did, in a sentence
    config: Config = Field(default_factory=Config)  # the resolved config it runs with
    seats: dict[str, Seat] = Field(default_factory=dict)
    turns: list[Turn] = Field(default_factory=list)
    redactions: list[Redaction] = Field(default_factory=list)
    timings: dict[str, NodeTiming] = Field(default_factory=dict)
    events: list[Event] = Field(default_factory=list)
    jail: Jail | None = None  # None: recorded before magi had a jail (schema < 3)
    processes: list[Process] = Field(default_factory=list)  # live now (magi.seats.census)
    questions: list[Question] = Field(default_factory=list)  # magi ask, in the order asked

    model_config = ConfigDict(extra="forbid", validate_assignment=True, populate_by_name=True)

    def agent_of(self, seat: str) -> str | None:
        """Who holds ``seat`` now (after any failover): the one source of truth."""
        record = self.seats.get(seat)
        return record.agent if record is not None else None

    def cli_of(self, seat: str) -> str | None:
        """The CLI that holds ``seat`` now, as "<kind> <version>" ("<kind>" alone when its
        version was not recorded); None for an agent the run's config does not name."""
        record = self.seats.get(seat)
        kind = next((a.kind for a in self.config.agents if record and a.id == record.agent), None)
        if record is None or kind is None:
            return None
        return f"{kind} {record.cli_version}" if record.cli_version else kind


class Run(Record):
    """A competition: candidates, judges, their rankings, votes and the tally."""

    KIND: ClassVar[str] = "competition"
    kind: Literal["competition"] = "competition"
    repo: str
    base: str
    base_sha: str | None = None
    seed: int
    task: Task
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
    leaks: list[Leak] = Field(default_factory=list)
    review: Review | None = None  # None: the review loop has not started
    gate: Gate | None = None
    merge: MergeRecord | None = None
    operator_fixes: list[OperatorFix] = Field(default_factory=list)  # `magi fix`, not rounds
    landing: Landing | None = None  # None: no landing fix round has run
    # The runner label sets the run waits for (HANDED_OFF), in the order its seats asked.
    handoff: list[list[str]] = Field(default_factory=list)
    # The label sets a wave was forked to, one seat job each, side by side; empty once the
    # join absorbed what they did (or when no wave was forked).
    fork: list[list[str]] = Field(default_factory=list)
    fork_node: ForkNode = "implement"  # which wave ``fork`` split
    # Which fork this is (a nonce drawn when the wave forked): a seat job's result, and the
    # results the record ref holds, count only for the fork they were made for.
    fork_id: str = ""
    # A deliberation's fork is one judge's turn: that seat and its round (the seats of any
    # other fork are its wave's whose agents need the fork's labels, and it has no round).
    fork_seats: list[str] = Field(default_factory=list)
    fork_round: int = 0
    # The seats a join's seat jobs asked in this pass (``node:round:seat``), which no later
    # stage of it asks again, as one runner asks each seat once a pass; a stage that goes on
    # from a hand-off keeps them, any other pass (a retry, an answer) starts without.
    joined: list[str] = Field(default_factory=list)

    def candidate(self, label: str) -> Candidate:
        for c in self.candidates:
            if c.label == label:
                return c
        raise KeyError(label)

    def author(self, label: str) -> str | None:
        return self.agent_of(self.candidate(label).seat)


# kind -> record model; another kind registers itself here (magi.state.council).
RECORD_KINDS: dict[str, type[Record]] = {Run.KIND: Run}
