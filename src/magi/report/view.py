"""One view of a run, the blind rule applied once: every rendering reads this, never the record.

Blindness outlives the judging node: an agent seated in a run can run ``magi show`` itself
(it gets MAGI_RUN), so until the tally has elected someone (or the run has finished for
good) the view holds no author or judge identity at all: every ``agent`` is None, and every
free text the view carries (reasons, errors, events, rationales) has the roster's ids and
the vendor names redacted. A renderer cannot leak what the view does not hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from magi.core.compete.edited_tests import describe
from magi.model.run import Candidate, Ranking, Run, RunStatus
from magi.report.costs import USAGE_KEYS, UsageRow, node_times, running_totals, usage_rows
from magi.report.failures import SeatView, Stopped, Terms, seat_views, stopped_node, warnings

HIDDEN = "hidden until the tally"


def revealed(run: Run) -> bool:
    """Whether authors may be shown: once a tally elected someone, or the run can never be
    judged again. A stalled run's tally has no quorum and its judges will be asked again."""
    elected = run.tally is not None and run.tally.quorum
    return elected or run.status.finished


@dataclass(frozen=True)
class FileView:
    path: str
    added: int | None  # None for binary files
    deleted: int | None


@dataclass(frozen=True)
class VerificationView:
    passed: bool
    commands: tuple[str, ...]
    exit_code: int | None
    timed_out: bool
    tail: str
    head: str | None
    duration_s: float


@dataclass(frozen=True)
class CandidateView:
    label: str
    seat: str
    agent: str | None  # None until revealed
    branch: str
    worktree: str | None
    status: str
    head: str | None
    files: tuple[FileView, ...]
    commits: int
    verified_noop: bool | None
    noop_evidence: str | None
    rescued: bool
    verification: VerificationView | None
    violations: tuple[str, ...]
    protected_changed: tuple[str, ...]
    disqualified: str | None
    tests_edited: tuple[str, ...] = ()  # one line per existing test file it weakened
    cli: str | None = None  # its author's CLI and version ("codex 0.171.0"); None until revealed


@dataclass(frozen=True)
class JudgeView:
    seat: str
    agent: str | None  # who holds the seat now (after any failover); None until revealed
    order: tuple[str, ...]
    cli: str | None = None  # that agent's CLI and version; None until revealed


@dataclass(frozen=True)
class RankingView:
    seat: str
    status: str
    ranking: tuple[str, ...]
    text: str
    round: int


@dataclass(frozen=True)
class VoteView:
    seat: str
    status: str
    vote: str | None
    rationale: str


@dataclass(frozen=True)
class CountedView:
    seat: str
    label: str
    source: str


@dataclass(frozen=True)
class TallyView:
    winner: str | None
    counts: dict[str, int]
    counted: tuple[CountedView, ...]
    judges: int
    answered: int
    quorum: bool
    uncontested: bool
    tie_break: str | None
    reason: str


@dataclass(frozen=True)
class LeakView:
    label: str
    where: str
    term: str
    action: str


@dataclass(frozen=True)
class EventView:
    at: datetime
    node: str
    message: str
    level: str


@dataclass(frozen=True)
class RunView:
    id: str
    status: str
    reason: str | None
    created_at: datetime
    repo: str
    base: str
    base_sha: str | None
    seed: int
    task: str
    revealed: bool
    labels: tuple[str, ...]
    winner: str | None
    candidates: tuple[CandidateView, ...]
    judges: tuple[JudgeView, ...]
    judgements: tuple[RankingView, ...]
    deliberation: tuple[RankingView, ...]
    votes: tuple[VoteView, ...]
    tally: TallyView | None
    leaks: tuple[LeakView, ...]
    events: tuple[EventView, ...]
    timings: tuple[tuple[str, float | None], ...]  # recorded nodes, in the order they ran
    stopped: Stopped | None  # the node the run stopped in, timed from its activity
    usage: tuple[UsageRow, ...]  # per seat, sorted, then "total"
    seats: tuple[SeatView, ...]
    warnings: tuple[str, ...]  # what a person must read first
    merge: str | None  # the command that merges the winner
    merge_mode: str
    jail: str = "not recorded"  # the guarantee the run's agents had
    usage_caveat: str | None = None  # said beside the cost table (report.costs)

    @property
    def failed_seats(self) -> tuple[SeatView, ...]:
        """Seats whose final turn failed, or that some agent lost on the way."""
        return tuple(s for s in self.seats if s.failed or len(s.holders) > 1)

    def author(self, label: str | None) -> str | None:
        """The agent behind ``label``, or None while hidden (or no such label)."""
        return next((c.agent for c in self.candidates if c.label == label), None)


def _merge_mode(run: Run) -> str:
    return run.config.merge.mode


def _merge_hint(run: Run) -> str | None:
    if run.merge is not None:  # the merge node recorded what it printed or did
        return run.merge.command
    if run.status is not RunStatus.READY or run.tally is None or run.tally.winner is None:
        return None
    winner = run.tally.winner
    c = next((c for c in run.candidates if c.label == winner), None)
    branch = c.branch if c is not None else f"magi/{run.id}/{winner}"
    # The recorded sha, not the branch: a branch can be moved after judging (by a seat, or
    # anyone), and `git merge <branch>` would then merge a commit nobody judged.
    if c is not None and c.head:
        return f"git merge {c.head}  # {branch}, as judged"
    return f"git merge {branch}"


def _candidate(run: Run, c: Candidate, terms: Terms) -> CandidateView:
    v = c.verification
    return CandidateView(
        label=c.label,
        seat=c.seat,
        agent=run.agent_of(c.seat) if terms.revealed else None,
        cli=run.cli_of(c.seat) if terms.revealed else None,
        branch=c.branch,
        worktree=c.worktree,
        status=c.status,
        head=c.head,
        files=tuple(FileView(f.path, f.added, f.deleted) for f in c.files),
        commits=c.commits,
        verified_noop=c.verified_noop,
        noop_evidence=None if c.noop_evidence is None else terms.scrub(c.noop_evidence),
        rescued=c.rescued,
        verification=None
        if v is None
        else VerificationView(
            v.passed,
            tuple(v.commands),
            v.exit_code,
            v.timed_out,
            terms.scrub(v.tail),
            v.head,
            v.duration_s,
        ),
        violations=tuple(terms.scrub(x) for x in c.violations),
        protected_changed=tuple(c.protected_changed),
        disqualified=None if c.disqualified is None else terms.scrub(c.disqualified),
        tests_edited=tuple(
            terms.scrub(describe(e.path, e.removed, e.count, e.deleted))
            for e in c.tests_changed or []
        ),
    )


def _ranking(r: Ranking, terms: Terms) -> RankingView:
    return RankingView(r.seat, r.status, tuple(r.ranking), terms.scrub(r.text), r.round)


def build(run: Run) -> RunView:
    """The view of ``run`` that every renderer reads."""
    terms = Terms.of(run, revealed(run))
    t = run.tally
    tally = None
    if t is not None:
        counted = tuple(CountedView(cv.seat, cv.label, cv.source) for cv in t.counted)
        tally = TallyView(
            t.winner,
            dict(t.counts),
            counted,
            t.judges,
            t.answered,
            t.quorum,
            t.uncontested,
            t.tie_break,
            t.reason,
        )
    seats = seat_views(run, terms)
    return RunView(
        id=run.id,
        status=run.status.value,
        reason=None if run.reason is None else terms.scrub(run.reason),
        created_at=run.created_at,
        repo=run.repo,
        base=run.base,
        base_sha=run.base_sha,
        seed=run.seed,
        task=run.task.cleaned,
        revealed=terms.revealed,
        labels=tuple(run.labels),
        winner=t.winner if t else None,
        candidates=tuple(_candidate(run, c, terms) for c in run.candidates),
        judges=tuple(
            JudgeView(
                j.seat,
                run.agent_of(j.seat) if terms.revealed else None,
                tuple(j.order),
                run.cli_of(j.seat) if terms.revealed else None,
            )
            for j in run.judges
        ),
        judgements=tuple(_ranking(r, terms) for r in run.judgements),
        deliberation=tuple(_ranking(r, terms) for r in run.deliberation),
        votes=tuple(
            VoteView(v.seat, v.status, v.vote, terms.scrub(v.rationale)) for v in run.votes
        ),
        tally=tally,
        leaks=tuple(LeakView(x.label, x.where, terms.scrub(x.term), x.action) for x in run.leaks),
        events=tuple(EventView(e.at, e.node, terms.scrub(e.message), e.level) for e in run.events),
        timings=node_times(run),
        stopped=stopped_node(run),
        usage=usage_rows(run),
        seats=seats,
        warnings=warnings(run, seats, terms),
        merge=_merge_hint(run),
        merge_mode=_merge_mode(run),
        jail="not recorded" if run.jail is None else f"{run.jail.mode} ({run.jail.reason})",
        usage_caveat=running_totals(run) if terms.revealed else None,
    )


__all__ = ["HIDDEN", "USAGE_KEYS", "RunView", "UsageRow", "build", "revealed"]
