"""Asking a seat: budget check, prompt redaction, artifacts, session continuity, failover, re-ask.

Every agent turn in the graph goes through ``ask``. Conversations belong to seats
(``impl-B``, ``judge-2``), never to agents, so the same model can sit as implementer and
judge without its judge seat ever containing the implementation it wrote.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from magi.agents.base import TurnRequest, TurnResult, TurnStatus
from magi.agents.process import interrupted
from magi.core.answers import Answer, parse_answer, reask_text
from magi.core.sanitize import redact_secrets
from magi.core.seating import failover_agent
from magi.errors import AnswerError, MagiError
from magi.graph.context import Context, Stop
from magi.state.model import Redaction, RunStatus, Seat, SeatState, Turn, Usage

M = TypeVar("M", bound=Answer)

# Statuses a resumed run asks again: the seat never gave an answer for a reason that can pass.
RETRYABLE: frozenset[SeatState] = frozenset({"pending", "quota", "timeout"})


def ensure_seat(ctx: Context, seat: str, agent: str) -> Seat:
    with ctx.lock:
        if seat not in ctx.run.seats:
            ctx.run.seats[seat] = Seat(name=seat, agent=agent)
        return ctx.run.seats[seat]


def node_timeout(ctx: Context, node: str, agent_id: str) -> float:
    override = getattr(ctx.config.agent(agent_id).timeouts, node, None)
    if override:
        return float(override)
    return float(getattr(ctx.config.graph, f"timeout_{node}"))


def spent_usd(ctx: Context) -> float:
    return sum(t.usage.cost_usd or 0.0 for t in ctx.run.turns)


def _spent_today_elsewhere(ctx: Context) -> float:
    """Cost recorded today by other runs in this store (read once per process)."""
    cached = ctx.cache.get("spent_today")
    if isinstance(cached, float):
        return cached
    today = ctx.clock().date()
    total = 0.0
    for run_id in ctx.store.list_ids():
        if run_id == ctx.run.id or not run_id.startswith(today.strftime("%Y%m%d")):
            continue
        try:
            other = ctx.store.load(run_id)
        except MagiError:
            continue  # an unreadable record is reported by `magi list`, not by a budget check
        total += sum(t.usage.cost_usd or 0.0 for t in other.turns if t.started_at.date() == today)
    ctx.cache["spent_today"] = total
    return total


def check_budget(ctx: Context) -> None:
    """A seat that would start past a cap is not started: the run is held, not failed."""
    budget = ctx.config.budget
    run_cost = spent_usd(ctx)
    if budget.run_usd is not None and run_cost >= budget.run_usd:
        raise Stop(
            RunStatus.HELD,
            f"budget: this run has spent ${run_cost:.2f} of its ${budget.run_usd:.2f} cap",
        )
    if budget.day_usd is not None:
        day = _spent_today_elsewhere(ctx) + run_cost
        if day >= budget.day_usd:
            raise Stop(
                RunStatus.HELD,
                f"budget: ${day:.2f} spent today against the ${budget.day_usd:.2f} daily cap",
            )


def _record_redactions(ctx: Context, found: list[Redaction]) -> None:
    for r in found:
        for have in ctx.run.redactions:
            if have.where == r.where and have.kind == r.kind:
                have.count += r.count
                break
        else:
            ctx.run.redactions.append(r)


def ask(
    ctx: Context,
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
    with ctx.lock:
        check_budget(ctx)
        record = ctx.run.seats[seat]
        agent_id = record.agent
        prompt, found = redact_secrets(prompt, f"prompt:{seat}")
        _record_redactions(ctx, found)
        turn_no = 1 + sum(1 for t in ctx.run.turns if t.seat == seat)
        stem = f"{node}-{seat}-t{turn_no}"
        prompt_rel = ctx.store.write_artifact(ctx.run.id, f"{stem}.prompt.md", prompt)
        session = record.session_id if ctx.config.graph.sessions else None
    budget = timeout if timeout is not None else node_timeout(ctx, node, agent_id)
    request = TurnRequest(
        seat=seat,
        prompt=prompt,
        cwd=cwd,
        allow_write=allow_write,
        timeout=budget,
        session_id=session,
        run_id=ctx.run.id,
        node=node,
        turn=turn_no,
        label=label,
        prompt_file=ctx.run_dir / prompt_rel,
    )
    ctx.reporter.seat(seat, "asked")
    started = ctx.clock()
    t0 = time.monotonic()
    result = ctx.agents[agent_id].run_turn(request)
    if interrupted():
        raise KeyboardInterrupt  # a seat killed by Ctrl-C gave no answer: it stays pending
    if not result.duration_s:
        result = replace(result, duration_s=time.monotonic() - t0)
    with ctx.lock:
        reply_rel = ctx.store.write_artifact(ctx.run.id, f"{stem}.reply.md", result.text)
        raw = f"{result.raw_stdout}\n--- stderr ---\n{result.raw_stderr}"
        raw_rel = ctx.store.write_artifact(ctx.run.id, f"{stem}.raw.txt", raw)
        if result.session_id and ctx.config.graph.sessions:
            record.session_id = result.session_id
        ctx.run.turns.append(
            Turn(
                seat=seat,
                node=node,
                turn=turn_no,
                agent=agent_id,
                status=result.status.value,
                started_at=started,
                duration_s=round(result.duration_s, 3),
                session_id=result.session_id,
                prompt_artifact=prompt_rel,
                reply_artifact=reply_rel,
                raw_artifact=raw_rel,
                error=result.error,
                usage=Usage(**vars(result.usage)),
                reask=reask,
            )
        )
        ctx.save()
    ctx.reporter.seat(seat, result.status.value, result.error or "")
    return result


def ask_with_failover(
    ctx: Context,
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
    continue (without one the full context is re-sent rather than argued from memory).
    """
    while True:
        record = ctx.run.seats[seat]
        live = bool(record.session_id and ctx.config.graph.sessions)
        result = ask(
            ctx,
            seat=seat,
            node=node,
            prompt=build(live),
            cwd=cwd,
            allow_write=allow_write,
            label=label,
        )
        if (
            result.status not in (TurnStatus.QUOTA, TurnStatus.TIMEOUT)
            or not ctx.config.graph.failover
        ):
            return result
        with ctx.lock:
            tried = [*record.failover_from, record.agent]
            nxt = failover_agent(ctx.roster, tried)
            if nxt is None:
                return result
            record.failover_from.append(record.agent)
            record.agent = nxt
            record.session_id = None
            ctx.save()
        ctx.event(
            node, f"{seat} lost to {result.status.value}; handed to the next agent in the roster"
        )
        if before_retry is not None:
            before_retry()


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
    ctx: Context,
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
    result = ask_with_failover(ctx, seat=seat, node=node, build=build, cwd=cwd, allow_write=False)
    answer, status, error, malformed = _read(result, shape, labels)
    if not malformed:
        return answer, status, error
    record = ctx.run.seats[seat]
    live = bool(record.session_id and ctx.config.graph.sessions)
    again = reask_text(shape.SHAPE, error)
    result = ask(
        ctx,
        seat=seat,
        node=node,
        prompt=again if live else build(False) + "\n\n" + again,
        cwd=cwd,
        allow_write=False,
        timeout=node_timeout(ctx, node, record.agent) / 4,
        reask=True,
    )
    answer, status, error, malformed = _read(result, shape, labels)
    if malformed:
        ctx.event(node, f"{seat}: answer still malformed after one re-ask ({error})", "warn")
    return answer, status, error
