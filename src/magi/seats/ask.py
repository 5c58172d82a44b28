"""Asking a seat: one turn, failover to the next agent, and the one re-ask of a malformed answer.

Every agent turn goes through ``ask``. Conversations belong to seats (``impl-B``,
``judge-2``), never to agents, so the same model can sit as implementer and judge without
its judge seat ever containing the implementation it wrote. A turn is written in three
steps, each under the record's lock: open it (budget, redaction, prompt artifact), run it
(outside the lock), record it (reply and raw artifacts, session, the turn, save).
"""

from __future__ import annotations

import secrets
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Protocol, TypeVar, cast, runtime_checkable

from magi.agents.base import TurnRequest, TurnResult, TurnStatus
from magi.agents.census import now_ticks
from magi.core.seats.runners import (
    PANEL_NODES,
    agent_labels,
    has_labels,
    labels_here,
    runner_host,
    stage_seats,
)
from magi.core.seats.seating import failover_agent
from magi.core.text.answers import Answer, parse_answer, reask_text
from magi.core.text.sanitize import redact_secrets, strip_controls
from magi.errors import AnswerError
from magi.model.run import ForkNode, Redaction, Run, RunStatus, SeatState, SessionTotal, Turn
from magi.seats.asking import Listening
from magi.seats.budget import check_budget
from magi.seats.census import end_turn
from magi.seats.context import SeatContext, Stop
from magi.seats.jailing import (
    applies_jail,
    close_net,
    end_seat_state,
    refuse_unjailed_agent,
    seat_jail,
)
from magi.seats.versions import start_version
from magi.state.failpoint import failpoint

M = TypeVar("M", bound=Answer)

# Statuses a resumed run asks again: the seat never gave an answer for a reason that can pass.
RETRYABLE: frozenset[SeatState] = frozenset({"pending", "quota", "timeout"})
# Turn statuses that hand a seat on to the next agent (with graph.failover).
_HAND_ON = (TurnStatus.QUOTA, TurnStatus.TIMEOUT)
_ASKING = ("open", "waiting")  # a question still wanting its answer


@runtime_checkable
class LiveReporter(Protocol):
    """A reporter that also shows each seat's live CLI output (the terminal's does)."""

    def output(self, seat: str, line: str, source: str = "") -> None: ...


def _live_output(sctx: SeatContext, seat: str, agent_id: str) -> Callable[[str], None] | None:
    reporter = sctx.reporter
    if not isinstance(reporter, LiveReporter):
        return None
    kind = sctx.config.agent(agent_id).kind
    return lambda line: reporter.output(seat, line, kind)


def node_timeout(sctx: SeatContext, node: str, agent_id: str) -> float:
    override = getattr(sctx.config.agent(agent_id).timeouts, node, None)
    if override:
        return float(override)
    return float(getattr(sctx.config.graph, f"timeout_{node}"))


@dataclass(frozen=True)
class _Opened:
    agent: str
    request: TurnRequest
    stem: str
    prompt_rel: str


def _record_redactions(sctx: SeatContext, found: list[Redaction]) -> None:
    for r in found:
        for have in sctx.record.redactions:
            if have.where == r.where and have.kind == r.kind:
                have.count += r.count
                break
        else:
            sctx.record.redactions.append(r)


def _open(
    sctx: SeatContext,
    *,
    seat: str,
    node: str,
    prompt: str,
    cwd: Path,
    allow_write: bool,
    label: str,
    timeout: float | None,
) -> _Opened:
    with sctx.lock:
        check_budget(sctx)
        record = sctx.record.seats[seat]
        prompt, found = redact_secrets(prompt, f"prompt:{seat}")
        _record_redactions(sctx, found)
        turn_no = 1 + sum(1 for t in sctx.record.turns if t.seat == seat)
        stem = f"{node}-{seat}-t{turn_no}"
        # Its folder is made durable with the turn's reply (``_record``), before the record
        # names it: one fsync of the folder a turn.
        prompt_rel = sctx.store.write_artifact(
            sctx.record.id, f"{stem}.prompt.md", prompt, sync_dir=False
        )
        session = record.session_id if sctx.config.graph.sessions else None
        kept = record.session_total
        total = kept.usage if kept is not None and session and kept.session_id == session else None
        agent = record.agent
        state_dir = sctx.run_dir / "seats" / seat
        if not state_dir.is_dir():  # made on the seat's first turn
            state_dir.mkdir(parents=True, exist_ok=True)
        bin_dir = _shim(sctx.run_dir)
    request = TurnRequest(
        seat=seat,
        prompt=prompt,
        cwd=cwd,
        allow_write=allow_write,
        timeout=timeout if timeout is not None else node_timeout(sctx, node, agent),
        session_id=session,
        session_total=total,
        run_id=sctx.record.id,
        node=node,
        turn=turn_no,
        label=label,
        prompt_file=sctx.run_dir / prompt_rel,
        environ=sctx.environ,
        cancel=sctx.cancel,
        on_output=_live_output(sctx, seat, agent),
        unreachable_after=sctx.config.graph.unreachable_after or None,
        jail=seat_jail(sctx, agent, cwd, allow_write, state_dir),
        state_dir=state_dir,
        path=(bin_dir,),
    )
    return _Opened(agent, request, stem, prompt_rel)


def _shim(run_dir: Path) -> Path:
    """The folder of ``magi`` for the seats' PATH (``<run>/bin``, shown read-only in every
    jail, where no seat can write): ``magi ask`` is how an agent asks a person instead of
    guessing. It runs this interpreter, never a ``magi`` found on PATH."""
    bin_dir = run_dir / "bin"
    shim = bin_dir / "magi"
    text = f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m magi "$@"\n'
    if not (shim.is_file() and not shim.is_symlink() and shim.read_text() == text):
        bin_dir.mkdir(exist_ok=True)
        tmp = bin_dir / ".magi.tmp"
        tmp.unlink(missing_ok=True)
        tmp.write_text(text)
        tmp.chmod(0o755)
        tmp.replace(shim)
    return bin_dir


def _record(
    sctx: SeatContext,
    opened: _Opened,
    result: TurnResult,
    started: datetime,
    reask: bool,
    refused: list[str],
) -> None:
    req = opened.request
    with sctx.lock:
        rid = sctx.record.id
        raw = f"{result.raw_stdout}\n--- stderr ---\n{result.raw_stderr}"
        reply_rel, raw_rel = sctx.store.write_artifacts(
            rid, {f"{opened.stem}.reply.md": result.text, f"{opened.stem}.raw.txt": raw}
        )
        if result.session_id and sctx.config.graph.sessions:
            seat = sctx.record.seats[req.seat]
            seat.session_id = result.session_id
            seat.session_host = runner_host(sctx.environ)
            if result.session_total is not None:
                seat.session_total = SessionTotal(
                    session_id=result.session_id, usage=result.session_total
                )
        sctx.record.turns.append(
            Turn(
                seat=req.seat,
                node=req.node,
                turn=req.turn,
                agent=opened.agent,
                status=result.status.value,
                started_at=started,
                duration_s=round(result.duration_s, 3),
                session_id=result.session_id,
                prompt_artifact=opened.prompt_rel,
                reply_artifact=reply_rel,
                raw_artifact=raw_rel,
                error=result.error,
                usage=result.usage,
                reask=reask,
                failure=result.failure,
                refused=refused,
            )
        )
        if refused:
            sctx.event(
                "egress", f"{req.seat}: egress refused {', '.join(sorted(set(refused)))}", "warn"
            )
        sctx.save()
    failpoint(f"turn:{req.seat}:{req.node}")  # the kill tests: a turn recorded, its node not yet


def ask(
    sctx: SeatContext,
    *,
    seat: str,
    node: str,
    prompt: str,
    cwd: Path,
    allow_write: bool,
    label: str = "",
    timeout: float | None = None,
    reask: bool = False,
) -> TurnResult:
    """One turn of ``seat``: continues its conversation when it has a live one."""
    sctx.check_cancelled()
    _here_or_hand_off(sctx, seat, node)
    noted = start_version(sctx, seat)  # read beside the turn, put on the record with it
    opened: _Opened | None = None
    try:
        opened = _open(
            sctx,
            seat=seat,
            node=node,
            prompt=prompt,
            cwd=cwd,
            allow_write=allow_write,
            label=label,
            timeout=timeout,
        )
        result, started, t0 = _turn(sctx, opened, seat, node, label)
    finally:
        # The turn's proxy ends, and the login laid in the seat's CLI copy leaves it,
        # whatever happened from the lay on (a guard or a listener that failed to start).
        refused = close_net(opened.request.jail) if opened is not None else []
        end_seat_state(sctx, seat)
    sctx.check_cancelled()  # a seat killed by cancellation gave no answer: it stays pending
    # Agent output enters other seats' packets: no NUL or control byte goes with it.
    result = replace(result, text=strip_controls(result.text))
    if not result.duration_s:
        result = replace(result, duration_s=time.monotonic() - t0)
    noted()
    _record(sctx, opened, result, started, reask, refused)
    sctx.reporter.seat(seat, result.status.value, result.error or "")
    return result


def _turn(
    sctx: SeatContext, opened: _Opened, seat: str, node: str, label: str
) -> tuple[TurnResult, datetime, float]:
    """The agent's turn between the guard's before and after: (result, started, t0)."""
    sctx.reporter.seat(seat, "asked")
    # A jail is only as good as the agent that applies it: one that does not say it does (a
    # plugin's own ``Agent``) is guarded and swept after as an unjailed seat is, and on a
    # runner it is not asked at all (no jail is no run).
    applies = applies_jail(sctx, opened.agent)
    if opened.request.jail is not None and not applies:
        refuse_unjailed_agent(sctx, opened.agent)
    jail = opened.request.jail if applies else None
    if sctx.guard is not None:
        sctx.guard.before(sctx, seat, node, jail=jail)
    started = sctx.clock()
    t0 = time.monotonic()
    since = now_ticks()
    req = opened.request
    state = req.state_dir or sctx.run_dir / "seats" / seat
    asks = Listening(sctx, seat=seat, node=node, turn=req.turn, label=label, state=state)
    asks.start()
    try:
        result = sctx.agents[opened.agent].run_turn(opened.request)
    finally:
        asks.stop()  # never raises: the turn's ending below always runs
        # Whatever the turn left behind goes, even when it was cut off by cancellation.
        end_turn(sctx, seat, opened.request.turn, since, jailed=jail is not None)
        if sctx.guard is not None:
            sctx.guard.after(sctx, seat, node)
    return result, started, t0


def _here_or_hand_off(sctx: SeatContext, seat: str, node: str) -> None:
    """A staged agents job seats only the agents its runner is logged in for: another's
    turn is not asked here. The run is handed off (``Stop``: the other seats of the wave
    finish first) and waits for a runner with that agent's labels; the reason names the
    labels, never the seat, so nothing public ties a candidate to a runner."""
    record = sctx.record
    if not isinstance(record, Run):
        return
    mine = stage_seats(sctx.environ)
    if mine is not None and (seat not in mine or node != record.fork_node):
        # A fork's seat job: the wave's other seats are other jobs', side by side, and
        # its own seats' next waves are the join's (a judge's deliberation turn must read
        # every first judgement, which only the join holds).
        raise Stop(RunStatus.HANDED_OFF, "the wave's other seats are other runners'")
    here = labels_here(sctx.environ)
    if here is None:
        return
    need = agent_labels(sctx.config, sctx.config.agent(record.seats[seat].agent))
    if has_labels(here, need):
        return
    if mine is not None:
        # A seat job's own seat passed to an agent another runner seats: the join asks it
        # there (it does not count the seat as asked), and forks or hands it on.
        raise Stop(RunStatus.HANDED_OFF, "a seat passed to an agent of another runner's")
    if node in PANEL_NODES:
        _fork_judge(sctx, record, seat, node, need)
    with sctx.lock:
        if need not in record.handoff:
            record.handoff.append(need)
            sctx.save()
    raise Stop(RunStatus.HANDED_OFF, f"waiting for a runner labelled {', '.join(need)}")


def _fork_judge(sctx: SeatContext, record: Run, seat: str, node: str, need: list[str]) -> None:
    """A judge's seat whose agent (a failover's, say) is another runner's: never handed on
    with the whole run, it goes there as a fork of its wave, from a panel (``graph.fork``).
    Seats of the same wave that pass on to other runners join the same fork."""
    with sctx.lock:
        if not record.fork or record.fork_node != node:
            record.fork, record.fork_node = [], cast("ForkNode", node)
            record.fork_id = secrets.token_hex(6)
            record.fork_seats, record.fork_round = [], 0
            if node == "deliberate":
                # One turn a fork: the round being argued, which the node set before asking.
                asked = sctx.cache.get(ROUND)
                record.fork_seats = [seat]
                record.fork_round = asked if isinstance(asked, int) else 0
        if need not in record.fork:
            record.fork.append(need)
        record.handoff = list(record.fork)
        sctx.save()
    raise Stop(
        RunStatus.HANDED_OFF, f"the judges' turn goes to a runner labelled {', '.join(need)}"
    )


# ``SeatContext.cache``: the deliberation round a turn is asked in (``graph.deliberate``).
ROUND = "deliberate.round"

# The event a resume with --retry-failed leaves: failures before it are forgiven.
RETRY_MARK = "retrying the seats that ended in error or timeout"


def failed_agents(sctx: SeatContext) -> dict[str, str]:
    """Agents that could not log in or reach their provider in this run, with why.

    Only failures since the latest ``--retry-failed`` count: a person who logged in after
    the run failed asks for exactly those agents to be tried again.
    """
    marks = [e.at for e in sctx.record.events if e.node == "run" and e.message == RETRY_MARK]
    since = max(marks) if marks else None
    out: dict[str, str] = {}
    for t in sctx.record.turns:
        if since is not None and t.started_at < since:
            continue
        if t.failure is not None and t.agent not in out:
            out[t.agent] = f"{t.failure}: {t.error or 'no detail'}"
    return out


def _hand_on(sctx: SeatContext, seat: str, node: str, why: str) -> bool:
    """Give ``seat`` to the next agent that has not tried it and has not failed in this run."""
    with sctx.lock:
        record = sctx.record.seats[seat]
        bad = failed_agents(sctx)
        tried = [*record.failover_from, record.agent, *bad]
        nxt = failover_agent(sctx.roster, tried)
        if nxt is None:
            return False
        record.failover_from.append(record.agent)
        record.agent = nxt
        record.session_id = None
        record.cli_version = None  # the next agent's CLI is read on its first turn
        # What the agent that lost the seat asked is nobody's question now: the next agent
        # starts afresh, and the run must not park (or stay parked) on it.
        # One a person answered stays: its answer is the next agent's turn too.
        dropped = [
            q
            for q in sctx.record.questions
            if q.seat == seat and q.status in _ASKING and not (q.turns and q.turns[-1].how)
        ]
        for q in dropped:
            q.status = "unanswered"
        sctx.save()
    if dropped:
        ids = ", ".join(q.id for q in dropped)
        sctx.event(node, f"{seat}: question {ids} withdrawn: the agent that asked lost the seat")
    skipped = [a for a in bad if a != record.failover_from[-1]]
    note = f" (skipping {', '.join(skipped)}: failed earlier in this run)" if skipped else ""
    sctx.event(node, f"{seat} {why}; handed to {nxt}, the next agent in the roster{note}")
    return True


def ask_with_failover(
    sctx: SeatContext,
    *,
    seat: str,
    node: str,
    build: Callable[[bool], str],
    cwd: Path,
    allow_write: bool,
    label: str = "",
    before_retry: Callable[[], None] | None = None,
) -> TurnResult:
    """Ask; a seat lost to quota or timeout may pass to the next agent, in a fresh conversation.

    ``build(live)`` renders the prompt; ``live`` says whether the seat has a conversation to
    continue (without one the full context is re-sent rather than argued from memory). An
    agent that failed its login or could not reach its provider earlier in the run is not
    asked again: its seats pass on before it is asked, and failover never picks it.
    """
    failover = sctx.config.graph.failover
    while True:
        record = sctx.record.seats[seat]
        bad = failed_agents(sctx)
        if failover and record.agent in bad:
            if not _hand_on(sctx, seat, node, f"held by {record.agent}, which {bad[record.agent]}"):
                break
            continue
        live = bool(record.session_id and sctx.config.graph.sessions)
        result = ask(
            sctx,
            seat=seat,
            node=node,
            prompt=build(live),
            cwd=cwd,
            allow_write=allow_write,
            label=label,
        )
        lost = result.status in _HAND_ON or result.failure is not None
        if not (lost and failover):
            return result
        if not _hand_on(sctx, seat, node, f"lost to {result.failure or result.status.value}"):
            return result
        if before_retry is not None:
            before_retry()
    # Every agent left has failed in this run: ask the holder anyway, so the record says why.
    return ask(
        sctx,
        seat=seat,
        node=node,
        prompt=build(False),
        cwd=cwd,
        allow_write=allow_write,
        label=label,
    )


def _read(
    result: TurnResult, shape: type[M], labels: list[str]
) -> tuple[M | None, SeatState, str, bool]:
    """(answer, status, error, malformed) of one turn that owes a ``shape`` block."""
    if not result.ok:
        return None, result.status.value, result.error or "", False
    try:
        return parse_answer(result.text, shape, labels=labels), "ok", "", False
    except AnswerError as e:
        return None, "invalid", e.message, True


def ask_structured(
    sctx: SeatContext,
    *,
    seat: str,
    node: str,
    build: Callable[[bool], str],
    shape: type[M],
    labels: list[str],
    cwd: Path,
) -> tuple[M | None, SeatState, str]:
    """A turn that owes one fenced json block; one re-ask in the same conversation, then invalid.

    magi never repairs or invents an answer: what does not parse is recorded as invalid.
    """
    result = ask_with_failover(sctx, seat=seat, node=node, build=build, cwd=cwd, allow_write=False)
    answer, status, error, malformed = _read(result, shape, labels)
    if not malformed:
        return answer, status, error
    record = sctx.record.seats[seat]
    live = bool(record.session_id and sctx.config.graph.sessions)
    again = reask_text(shape.SHAPE, error)
    result = ask(
        sctx,
        seat=seat,
        node=node,
        prompt=again if live else build(False) + "\n\n" + again,
        cwd=cwd,
        allow_write=False,
        timeout=node_timeout(sctx, node, record.agent) / 4,
        reask=True,
    )
    answer, status, error, malformed = _read(result, shape, labels)
    if malformed:
        sctx.event(node, f"{seat}: answer still malformed after one re-ask ({error})", "warn")
    return answer, status, error
