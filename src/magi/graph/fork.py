"""A wave split across runners: a staged job whose wave needs several runners' logins.

A wave that asks its seats side by side (implement, the judges' first judgement, the vote,
a review round) and whose seats' agents need more than one label set, one of them not this
job's own, asks none of them here: it is forked (``Run.fork``, ``Run.fork_node``). publish
dispatches one seat job per label set at once, each asks only its own seats, and the join
goes on from what they did (``magi.action.agents_job.fork``, ``docs/fan-out.md``).

A judge's seat (its first judgement, its deliberation turns, its vote) is never handed on
with the whole run: a judge's runner may be a machine that must not learn who wrote which
candidate, so its turns are forked even when they need one other label set only, and its
seat job works from a panel (``magi.report.before_tally.panel_copy``). Deliberation is
forked one turn at a time: each judge's turn there reads the arguments before it.
"""

from __future__ import annotations

import secrets

from magi.core.seats.runners import (
    PANEL_NODES,
    fork_groups,
    has_labels,
    labels_here,
    stage_seats,
)
from magi.graph.context import Context, Stop
from magi.model.run import ForkNode, RunStatus


def fork_wave(ctx: Context, node: ForkNode, seats: list[str], round: int = 0) -> None:
    """Fork ``node``'s wave of ``seats`` (its todo, in seat order) when this staged job
    cannot ask them all and they need more than one runner's labels, or are judges' seats
    on another runner; otherwise return. ``round``: a deliberation turn's."""
    here = labels_here(ctx.environ)
    if here is None or stage_seats(ctx.environ) is not None:
        return
    r = ctx.run
    groups = fork_groups(ctx.config, [(s, r.seats[s].agent) for s in seats])
    if all(has_labels(here, labels) for labels, _ in groups):
        return
    if len(groups) < 2 and node not in PANEL_NODES:
        return  # handed on whole (``seats.ask``): one runner after another
    with ctx.lock:
        r.fork = [labels for labels, _ in groups]
        r.fork_node = node
        r.fork_id = secrets.token_hex(6)
        r.fork_seats = list(seats) if node == "deliberate" else []
        r.fork_round = round
        r.handoff = list(r.fork)
    ctx.save()
    sets = "; ".join(", ".join(labels) for labels in r.fork)
    if len(groups) == 1:  # a judge's seat on another runner, which works from a panel
        raise Stop(RunStatus.HANDED_OFF, f"the judges' turn goes to a runner labelled {sets}")
    raise Stop(RunStatus.HANDED_OFF, f"the wave goes to {len(groups)} runners at once ({sets})")
