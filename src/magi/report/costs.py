"""Time and tokens: what each seat spent, summed over its turns, and the seconds per node.

A seat's dollars are its CLIs' own figures plus, for turns that reported tokens but no cost,
an estimate at the run's prices (``magi.core.figures.pricing``); ``estimated_usd`` says how much of
``cost_usd`` is estimated, so no renderer shows an estimate as a bill.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from magi.core.figures.pricing import Spend, price_table, spend, usd
from magi.model.config import Price
from magi.model.run import Run, Turn, Usage

USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "cost_usd",
    "estimated_usd",
    "unmetered_seconds",
    "refused",
)
ESTIMATE_NOTE = (
    "~ estimated from tokens at [budget.prices] (or magi's defaults), not reported by the CLI; "
    "- no cost and no priced tokens (that time counts toward [budget] run_minutes)"
)

RUNNING_TOTALS = (
    "{seats}: codex may report a resumed thread's running total rather than the turn's, "
    "so a later turn of these seats can count the earlier ones again (an estimate that "
    "errs high, never low)"
)


def running_totals(run: Run) -> str | None:
    """The caveat for seats whose codex conversation was continued, if any: it names a
    kind, so it is for a report whose authors are out."""
    kinds = {a.id: a.kind for a in run.config.agents}
    seen: set[tuple[str, str]] = set()
    seats: set[str] = set()
    for t in run.turns:
        if kinds.get(t.agent) != "codex" or not t.session_id:
            continue
        if (t.seat, t.session_id) in seen:
            seats.add(t.seat)
        seen.add((t.seat, t.session_id))
    return RUNNING_TOTALS.format(seats=", ".join(sorted(seats))) if seats else None


@dataclass(frozen=True)
class UsageRow:
    seat: str  # or "total"
    turns: int
    seconds: float
    input_tokens: int | None  # None: the CLI never reported it, which is not zero
    output_tokens: int | None
    cached_tokens: int | None
    cost_usd: float | None  # reported plus estimated; None: no turn had a dollar figure
    estimated_usd: float | None = None  # the part of cost_usd estimated from tokens
    unmetered_seconds: float = 0.0  # seconds of turns with no dollar figure
    refused: int = 0  # connections the jail's egress proxy refused (``Turn.refused``)

    @property
    def cost(self) -> str:
        """The dollars as shown: ``$0.42``, ``~$0.42 est.``, or ``-``."""
        if self.cost_usd is None:
            return "-"
        return usd(self.cost_usd, self.estimated_usd or 0.0, places=4)


def _row(seat: str, turns: list[Turn], prices: Mapping[str, Price]) -> UsageRow:
    usage = sum((t.usage for t in turns), Usage())
    spent: Spend = spend(turns, prices)
    return UsageRow(
        seat=seat,
        turns=len(turns),
        seconds=round(sum(t.duration_s for t in turns), 3),
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_tokens=usage.cached_tokens,
        cost_usd=round(spent.usd, 6) if spent.metered else None,
        estimated_usd=round(spent.estimated_usd, 6) if spent.estimated_usd else None,
        unmetered_seconds=round(spent.unmetered_s, 3),
        refused=sum(len(t.refused) for t in turns),
    )


def usage_rows(run: Run) -> tuple[UsageRow, ...]:
    """Tokens, cost, turns and seconds per seat (sorted), summed over its turns, then total."""
    prices = price_table(run.config.budget.prices)
    per: dict[str, list[Turn]] = {}
    for turn in run.turns:
        per.setdefault(turn.seat, []).append(turn)
    rows = [_row(seat, per[seat], prices) for seat in sorted(per)]
    return (*rows, _row("total", list(run.turns), prices))


def shows_estimates(rows: tuple[UsageRow, ...]) -> bool:
    """Whether a cost table needs ``ESTIMATE_NOTE``: some figure is estimated or missing."""
    return any(r.estimated_usd or r.cost_usd is None for r in rows)


def shows_refusals(rows: tuple[UsageRow, ...]) -> bool:
    """Whether a cost table needs its ``refused`` column: the egress proxy refused something."""
    return any(r.refused for r in rows)


def node_times(run: Run) -> tuple[tuple[str, float | None], ...]:
    """Wall seconds per recorded node; computed from the timestamps when only those were stored."""
    out: list[tuple[str, float | None]] = []
    for node, t in run.timings.items():
        seconds = t.seconds
        if seconds is None and t.finished_at is not None:
            seconds = (t.finished_at - t.started_at).total_seconds()
        out.append((node, None if seconds is None else round(seconds, 3)))
    return tuple(out)
