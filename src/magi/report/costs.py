"""Time and tokens: what each seat spent, summed over its turns, and the seconds per node."""

from __future__ import annotations

from dataclasses import dataclass

from magi.state.model import Run, Usage

USAGE_KEYS = ("input_tokens", "output_tokens", "cached_tokens", "cost_usd")


@dataclass(frozen=True)
class UsageRow:
    seat: str  # or "total"
    turns: int
    seconds: float
    input_tokens: int | None  # None: the CLI never reported it, which is not zero
    output_tokens: int | None
    cached_tokens: int | None
    cost_usd: float | None


def _row(seat: str, turns: int, seconds: float, usage: Usage) -> UsageRow:
    return UsageRow(
        seat=seat,
        turns=turns,
        seconds=round(seconds, 3),
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_tokens=usage.cached_tokens,
        cost_usd=usage.cost_usd,
    )


def usage_rows(run: Run) -> tuple[UsageRow, ...]:
    """Tokens, cost, turns and seconds per seat (sorted), summed over its turns, then total."""
    per: dict[str, tuple[int, float, Usage]] = {}
    for turn in run.turns:
        n, secs, usage = per.get(turn.seat, (0, 0.0, Usage()))
        per[turn.seat] = (n + 1, round(secs + turn.duration_s, 3), usage + turn.usage)
    total = (0, 0.0, Usage())
    for n, secs, usage in per.values():
        total = (total[0] + n, round(total[1] + secs, 3), total[2] + usage)
    rows = [_row(seat, *per[seat]) for seat in sorted(per)]
    return (*rows, _row("total", *total))


def node_times(run: Run) -> tuple[tuple[str, float | None], ...]:
    """Wall seconds per recorded node; computed from the timestamps when only those were stored."""
    out: list[tuple[str, float | None]] = []
    for node, t in run.timings.items():
        seconds = t.seconds
        if seconds is None and t.finished_at is not None:
            seconds = (t.finished_at - t.started_at).total_seconds()
        out.append((node, None if seconds is None else round(seconds, 3)))
    return tuple(out)
