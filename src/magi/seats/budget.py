"""Budget caps: a seat that would start past ``[budget]`` is not started; the run is held."""

from __future__ import annotations

from magi.errors import MagiError
from magi.seats.context import SeatContext, Stop
from magi.state.model import Record, RunStatus


def spent_usd(record: Record) -> float:
    return sum(t.usage.cost_usd or 0.0 for t in record.turns)


def _spent_today_elsewhere(sctx: SeatContext) -> float:
    """Cost recorded today by other runs in this store (read once per process)."""
    cached = sctx.cache.get("spent_today")
    if isinstance(cached, float):
        return cached
    today = sctx.clock().date()
    total = 0.0
    for run_id in sctx.store.list_ids():
        if run_id == sctx.record.id or not run_id.startswith(today.strftime("%Y%m%d")):
            continue
        try:
            other = sctx.store.load(run_id)
        except MagiError:
            continue  # an unreadable record is reported by `magi list`, not by a budget check
        total += sum(t.usage.cost_usd or 0.0 for t in other.turns if t.started_at.date() == today)
    sctx.cache["spent_today"] = total
    return total


def check_budget(sctx: SeatContext) -> None:
    """Raise ``Stop(HELD)`` when the run or the day has reached its cap."""
    budget = sctx.config.budget
    run_cost = spent_usd(sctx.record)
    if budget.run_usd is not None and run_cost >= budget.run_usd:
        raise Stop(
            RunStatus.HELD,
            f"budget: this run has spent ${run_cost:.2f} of its ${budget.run_usd:.2f} cap",
        )
    if budget.day_usd is not None:
        day = _spent_today_elsewhere(sctx) + run_cost
        if day >= budget.day_usd:
            raise Stop(
                RunStatus.HELD,
                f"budget: ${day:.2f} spent today against the ${budget.day_usd:.2f} daily cap",
            )
