"""What went wrong in a run, said plainly: failed seats, failover chains, where it stopped.

A run that failed must say why without sending anyone to ``run.json``: each seat lists who
held it and how each holder lost it (the turn's own error, which keeps the CLI's last
words), the node it stopped in is timed from its activity (the runner times only the nodes
that finished), and an uncontested win because every rival failed is a warning, not a win
that reads as clean.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from magi.core.compete.blind import MIN_ID_LENGTH, leak_terms, redact_terms
from magi.model.run import Run, RunStatus, Turn

FAILED = frozenset({"timeout", "error", "quota", "invalid"})
_ENDED_WELL = frozenset({RunStatus.READY, RunStatus.VERIFIED_NOOP, RunStatus.MERGED})
_STOPS = frozenset(
    {
        RunStatus.FAILED,
        RunStatus.STALLED,
        RunStatus.HELD,
        RunStatus.PARKED,
        RunStatus.ASKING,
        RunStatus.HANDED_OFF,
        RunStatus.BLOCKED,
        RunStatus.INTERRUPTED,
    }
)


@dataclass(frozen=True)
class Terms:
    """The identities to redact from free text while the run is blind."""

    revealed: bool
    terms: tuple[str, ...]

    @classmethod
    def of(cls, run: Run, revealed: bool) -> Terms:
        ids = {t.agent for t in run.turns}
        for s in run.seats.values():
            ids |= {s.agent, *s.failover_from}
        found = [i for i in sorted(ids) if len(i) >= MIN_ID_LENGTH]
        return cls(revealed, (*leak_terms(run.config.agents), *found))

    def scrub(self, text: str) -> str:
        return text if self.revealed else redact_terms(text, self.terms)


@dataclass(frozen=True)
class Holder:
    """One agent's time in a seat, and how it ended."""

    agent: str | None  # None while the run is blind
    status: str  # its last turn's status in this seat; "pending" before any
    reason: str  # its last turn's error, "" when none
    turns: int
    failure: str | None = None  # "auth" or "unreachable": the agent failed, not the turn


@dataclass(frozen=True)
class SeatView:
    name: str
    agent: str | None  # who holds it now; None while blind
    holders: tuple[Holder, ...]  # in order: the first agent, then each failover

    @property
    def status(self) -> str:
        return self.holders[-1].status if self.holders else "pending"

    @property
    def reason(self) -> str:
        return self.holders[-1].reason if self.holders else ""

    @property
    def failed(self) -> bool:
        return self.status in FAILED

    def chain(self) -> str:
        """``1 timeout (why) -> 2 error (why)``: who held the seat and how each lost it."""
        parts = []
        for n, h in enumerate(self.holders, 1):
            who = h.agent or f"agent {n}"
            why = f" ({h.reason})" if h.reason else ""
            kind = f" [{h.failure}]" if h.failure else ""
            parts.append(f"{who} {h.status}{kind}{why}")
        return " -> ".join(parts)


@dataclass(frozen=True)
class Stopped:
    """The node a run stopped in (it has no timing of its own), and how long it ran."""

    node: str
    seconds: float
    stopped: bool  # False: the record says the run is still in this node (or it crashed)

    def note(self, status: str) -> str:
        return f"stopped here: {status}" if self.stopped else f"still running: {status}"


def _holders(run: Run, name: str, terms: Terms) -> tuple[Holder, ...]:
    turns = [t for t in run.turns if t.seat == name]
    seat = run.seats.get(name)
    order = [*seat.failover_from, seat.agent] if seat else []
    for t in turns:
        if t.agent not in order:
            order.append(t.agent)
    out = []
    for agent in order:
        mine = [t for t in turns if t.agent == agent]
        last: Turn | None = mine[-1] if mine else None
        out.append(
            Holder(
                agent=agent if terms.revealed else None,
                status=last.status if last else "pending",
                reason=terms.scrub(last.error or "") if last else "",
                turns=len(mine),
                failure=last.failure if last else None,
            )
        )
    return tuple(out)


def seat_views(run: Run, terms: Terms) -> tuple[SeatView, ...]:
    """Every seat of the run, with the agents that held it in turn."""
    names = list(run.seats)
    names += [t.seat for t in run.turns if t.seat not in names]
    names = list(dict.fromkeys(names))
    out = []
    for name in names:
        holders = _holders(run, name, terms)
        seat = run.seats.get(name)
        agent = seat.agent if seat else (holders[-1].agent if holders else None)
        out.append(SeatView(name, agent if terms.revealed else None, holders))
    return tuple(out)


def stopped_node(run: Run) -> Stopped | None:
    """Where a run that did not end well stopped, timed from the end of the node before."""
    if run.status in _ENDED_WELL:
        return None
    activity = [
        (t.started_at, t.started_at + timedelta(seconds=t.duration_s), t.node) for t in run.turns
    ]
    activity += [(e.at, e.at, e.node) for e in run.events if e.node != "run"]
    if not activity:
        return None
    node = max(activity, key=lambda a: a[1])[2]
    first = min(a[0] for a in activity if a[2] == node)
    last = max(a[1] for a in activity if a[2] == node)
    done = run.timings.get(node)
    if done is not None and done.finished_at is not None and done.finished_at >= last:
        return None  # that node finished; the run stopped between nodes
    stops = [e.at for e in run.events if e.node == "run" and e.at >= last]
    end = min(stops) if stops else last
    before = [
        t.finished_at
        for n, t in run.timings.items()
        if n != node and t.finished_at is not None and t.finished_at <= first
    ]
    start = max(before, default=first)
    return Stopped(node, round((end - start).total_seconds(), 3), run.status in _STOPS)


def _candidate_failure(run: Run, label: str, seats: dict[str, SeatView]) -> str:
    c = run.candidate(label)
    seat = seats.get(c.seat)
    if c.disqualified:
        return f"{label} disqualified: {c.disqualified}"
    if c.status in FAILED:
        why = f": {seat.reason}" if seat and seat.reason else ""
        return f"{label} implementer {c.status}{why}"
    if c.verified_noop:
        return f"{label} claimed no change is needed"
    if not c.produced:
        return f"{label} produced nothing"
    return f"{label} was not viable"


def warnings(run: Run, seats: tuple[SeatView, ...], terms: Terms) -> tuple[str, ...]:
    """The sentences a person must read before anything else, most important first."""
    out: list[str] = []
    by_name = {s.name: s for s in seats}
    t = run.tally
    others = [c.label for c in run.candidates if t is None or c.label != t.winner]
    if t is not None and t.uncontested and t.winner and others:
        why = "; ".join(_candidate_failure(run, x, by_name) for x in others)
        out.append(
            f"uncontested: {t.winner} won only because no other candidate could be judged: {why}"
        )
    if run.status not in _ENDED_WELL and run.status is not RunStatus.CREATED and run.reason:
        out.append(f"run {run.status.value}: {terms.scrub(run.reason)}")
    if t is not None and not t.quorum and not t.uncontested:
        out.append(f"no quorum: {t.answered} of {t.judges} judges could be counted")
    for s in seats:
        if s.failed:
            who = f" ({s.agent})" if s.agent else ""
            why = f": {s.reason}" if s.reason else ""
            out.append(f"{s.name}{who} {s.status}{why}")
        if len(s.holders) > 1:
            out.append(f"{s.name} failed over: {s.chain()}")
    kept = [c.label for c in run.candidates if c.worktree]
    if kept and run.status.finished and run.status is not RunStatus.READY:
        out.append(f"worktrees kept for {', '.join(kept)}: `magi fold {run.id}` removes them")
    return tuple(out)
