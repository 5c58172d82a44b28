"""A wave split across runners: a staged job whose wave needs several runners' logins.

A wave that asks its seats side by side (implement, the judges' first judgement, the vote,
a review round) and whose seats' agents need more than one label set, one of them not this
job's own, asks none of them here: it is forked (``Run.fork``, ``Run.fork_node``). publish
dispatches one seat job per label set at once, each asks only its own seats, and the join
goes on from what they did (``magi.action.agents_job.fork``, ``docs/fan-out.md``).
Deliberation is not forked: each judge's turn there reads the arguments of the judges
before it.
"""

from __future__ import annotations

import secrets

from magi.core.seats.runners import fork_groups, has_labels, labels_here, stage_seats
from magi.graph.context import Context, Stop
from magi.model.run import ForkNode, RunStatus


def fork_wave(ctx: Context, node: ForkNode, seats: list[str]) -> None:
    """Fork ``node``'s wave of ``seats`` (its todo, in seat order) when this staged job
    cannot ask them all and they need more than one runner's labels; otherwise return."""
    here = labels_here(ctx.environ)
    if here is None or stage_seats(ctx.environ) is not None:
        return
    r = ctx.run
    groups = fork_groups(ctx.config, [(s, r.seats[s].agent) for s in seats])
    if len(groups) < 2 or all(has_labels(here, labels) for labels, _ in groups):
        return
    with ctx.lock:
        r.fork = [labels for labels, _ in groups]
        r.fork_node = node
        r.fork_id = secrets.token_hex(6)
        r.handoff = list(r.fork)
    ctx.save()
    sets = "; ".join(", ".join(labels) for labels in r.fork)
    raise Stop(RunStatus.HANDED_OFF, f"the wave goes to {len(groups)} runners at once ({sets})")
