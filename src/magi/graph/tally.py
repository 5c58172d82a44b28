"""tally: code, never an agent, counts the votes (rules in ``magi.core.compete.tally``)."""

from __future__ import annotations

from magi.core.compete.tally import count_votes, uncontested
from magi.graph.context import Context, Stop
from magi.graph.guard import pin_heads
from magi.graph.packets import viable_labels
from magi.model.run import RunStatus, Tally

NAME = "tally"
STATUS = RunStatus.TALLYING


def compute(ctx: Context) -> Tally:
    """The tally the stored record implies; ``magi tally --verify`` recomputes it the same way."""
    r = ctx.run
    labels = viable_labels(ctx)
    if r.judge_skipped:
        return uncontested(labels[0])
    return count_votes(
        labels=r.labels,
        viable=labels,
        judges=len(r.judges),
        first_rankings={j.seat: (j.ranking if j.status == "ok" else None) for j in r.judgements},
        votes={v.seat: (v.vote if v.status == "ok" else None) for v in r.votes},
    )


def run(ctx: Context) -> None:
    r = ctx.run
    if r.tally is not None and r.tally.quorum:
        return
    pin_heads(ctx, NAME)  # what is counted for is what was judged
    tally = compute(ctx)
    r.tally = tally
    ctx.save()
    if tally.quorum and tally.winner:
        ctx.event(NAME, f"winner: {tally.winner} ({tally.reason})")
        return
    lost = [j.status for j in r.judgements] + [v.status for v in r.votes]
    if "quota" in lost:
        raise Stop(RunStatus.STALLED, f"{tally.reason}; judges were lost to rate limits")
    raise Stop(RunStatus.FAILED, tally.reason)
