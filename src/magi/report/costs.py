"""Time and tokens: what each seat spent, summed over its turns, and the seconds per node."""

from __future__ import annotations

from dataclasses import dataclass

from magi.state.model import Run

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


def _add(a: float | None, b: float | None) -> float | None:
    # None means "the CLI never reported it", which must not read as zero.
    return b if a is None else a if b is None else a + b


def usage_rows(run: Run) -> tuple[UsageRow, ...]:
    """Tokens, cost, turns and seconds per seat (sorted), summed over its turns, then total."""
    rows: dict[str, dict[str, float | int | None]] = {}
    total: dict[str, float | int | None] = {"turns": 0, "seconds": 0.0}
    for turn in run.turns:
        row = rows.setdefault(turn.seat, {"turns": 0, "seconds": 0.0})
        for acc in (row, total):
            for key in USAGE_KEYS:
                acc[key] = _add(acc.get(key), getattr(turn.usage, key))
            acc["turns"] = int(acc["turns"] or 0) + 1
            acc["seconds"] = round(float(acc["seconds"] or 0.0) + turn.duration_s, 3)
    ordered = [*sorted(rows.items()), ("total", total)]
    return tuple(_usage_row(seat, acc) for seat, acc in ordered)


def _usage_row(seat: str, acc: dict[str, float | int | None]) -> UsageRow:
    def tokens(key: str) -> int | None:
        v = acc.get(key)
        return None if v is None else int(v)

    cost = acc.get("cost_usd")
    return UsageRow(
        seat=seat,
        turns=int(acc["turns"] or 0),
        seconds=float(acc["seconds"] or 0.0),
        input_tokens=tokens("input_tokens"),
        output_tokens=tokens("output_tokens"),
        cached_tokens=tokens("cached_tokens"),
        cost_usd=None if cost is None else float(cost),
    )


def node_times(run: Run) -> tuple[tuple[str, float | None], ...]:
    """Wall seconds per recorded node; computed from the timestamps when only those were stored."""
    out: list[tuple[str, float | None]] = []
    for node, t in run.timings.items():
        seconds = t.seconds
        if seconds is None and t.finished_at is not None:
            seconds = (t.finished_at - t.started_at).total_seconds()
        out.append((node, None if seconds is None else round(seconds, 3)))
    return tuple(out)
