"""The runner: any sequence of stages, each a node or a bounded loop of nodes.

A node is anything with ``NAME``, ``STATUS`` (what the run shows while it works) and
``run(ctx)``; each module of ``magi.graph`` is one. A node skips what the record already
holds and writes its state before the next starts, so a killed run resumes without paying
again for finished seats. The runner, not a node, decides how a run ends: ``ready`` when the
sequence ran out, or the status of the ``Stop`` a node raised.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from magi.core.seats.runners import stage_seats
from magi.graph.context import Context
from magi.model.run import NodeTiming, Run, RunStatus
from magi.seats import Cancelled, Stop
from magi.seats.asking import on_runner
from magi.state.failpoint import failpoint


class Node(Protocol):
    """One step of a pipeline (a module with these names satisfies it)."""

    @property
    def NAME(self) -> str: ...
    @property
    def STATUS(self) -> RunStatus: ...

    def run(self, ctx: Context) -> None: ...


@dataclass(frozen=True)
class Loop:
    """Run ``nodes`` in order, round after round, until ``until(ctx)`` or ``max_rounds(ctx)``.

    ``until`` is asked before each round, so a loop whose work the record already holds
    (a resume) runs no round at all. What happens when the rounds run out is the nodes'
    own decision (the review loop raises ``Stop(blocked)``); the loop only bounds them.
    """

    NAME: str
    nodes: tuple[Node, ...]
    until: Callable[[Context], bool]
    max_rounds: Callable[[Context], int]


Stage = Node | Loop


def names(pipeline: Sequence[Stage]) -> list[str]:
    """Every node name in order, loop bodies included (README's diagram is drawn from this)."""
    out: list[str] = []
    for stage in pipeline:
        if isinstance(stage, Loop):
            out += [n.NAME for n in stage.nodes]
        else:
            out.append(stage.NAME)
    return out


def mermaid(pipeline: Sequence[Stage]) -> str:
    """A mermaid flowchart of ``pipeline``; a loop is drawn as its back edge."""
    lines = ["flowchart LR"]
    lines += [f"  {a} --> {b}" for a, b in itertools.pairwise(names(pipeline))]
    for stage in pipeline:
        if isinstance(stage, Loop) and stage.nodes:
            first, last = stage.nodes[0].NAME, stage.nodes[-1].NAME
            lines.append(f"  {last} -. next round .-> {first}")
    return "\n".join(lines)


def _park_here(ctx: Context, node: Node) -> None:
    """A park asked for (``magi park``, SIGTERM under ``--park``) stops the run here, between
    nodes: every seat that was out has finished its turn and is kept."""
    why = ctx.store.park_request(ctx.run.id)
    if why is None:
        return
    ctx.store.clear_park(ctx.run.id)
    # On a runner the tracking comment says how it goes on (`/magi retry`); here, the CLI.
    how = "" if on_runner(ctx) else f"; magi run --resume {ctx.run.id} carries it on"
    raise Stop(RunStatus.PARKED, f"parked before {node.NAME} ({why}){how}")


def _node(ctx: Context, node: Node) -> None:
    _park_here(ctx, node)
    r = ctx.run
    name = node.NAME
    r.status = node.STATUS
    started = ctx.clock()
    prior = r.timings.get(name)
    ctx.reporter.node(name)
    # One write for this node's start and the end of the one before it (its timing): what
    # a node did is saved by the node as it does it, and a kill between its end and this
    # write costs the resume that node's bookkeeping again, never a seat's turn.
    ctx.save()
    failpoint(f"node:{name}:begun")  # the kill tests: kill -9 right after a node began
    node.run(ctx)
    finished = ctx.clock()
    spent = (finished - started).total_seconds() + ((prior.seconds or 0.0) if prior else 0.0)
    r.timings[name] = NodeTiming(
        started_at=prior.started_at if prior else started,
        finished_at=finished,
        seconds=round(spent, 3),
    )
    # Saved by what comes next: the next node's start, or the run's end (``execute``).
    failpoint(f"node:{name}:ended")  # ... and right after it ended, before that save


def _stages(ctx: Context, pipeline: Sequence[Stage]) -> None:
    only = _seat_jobs_wave(ctx)
    for stage in pipeline:
        if isinstance(stage, Loop):
            for _ in range(stage.max_rounds(ctx)):
                if stage.until(ctx):
                    break
                for node in stage.nodes:
                    _step(ctx, node, only)
        else:
            _step(ctx, stage, only)


def _seat_jobs_wave(ctx: Context) -> str | None:
    """The wave a fork's seat job works in (``magi.graph.fork``); None in any other job."""
    r = ctx.run
    if stage_seats(ctx.environ) is None or not isinstance(r, Run) or not r.fork:
        return None
    return r.fork_node


def _step(ctx: Context, node: Node, only: str | None) -> None:
    """``node``, unless this is a fork's seat job: that runs its fork's wave alone (and
    prep, which an implementer's clone needs), then stops. Its run is the join's to carry
    on: a seat of an earlier wave still to be asked (a judge out of quota) is the join's
    too, and must not stop the seat job before its own wave."""
    if only is None:
        _node(ctx, node)
        return
    if only == node.NAME:
        _node(ctx, node)
        raise Stop(RunStatus.HANDED_OFF, "the wave's other seats are other runners'")
    if node.NAME == "prep" and only == "implement":
        _node(ctx, node)


def execute(ctx: Context, pipeline: Sequence[Stage]) -> Run:
    """Run ``pipeline``; the sequence ending is ``ready``, a ``Stop`` ends it with its status.

    Cancellation (``Cancelled``) records the run as ``interrupted`` and propagates, so the
    caller can exit the way its signal asks.
    """
    r = ctx.run
    r.handoff = []  # what this pass waits for is its own (a staged agents job: seats.ask)
    try:
        _stages(ctx, pipeline)
    except Stop as stop:
        r.status = stop.status
        r.reason = stop.reason
        calm = stop.status in (RunStatus.VERIFIED_NOOP, RunStatus.MERGED)
        ctx.event("run", f"{stop.status.value}: {stop.reason}", "info" if calm else "warn")
        ctx.save()
        return r
    except Cancelled:
        r.status = RunStatus.INTERRUPTED
        r.reason = "interrupted; resume with magi run --resume " + r.id
        ctx.save()
        raise
    r.status = RunStatus.READY
    ctx.save()
    return r
