"""Budget caps: a seat that would start past ``[budget]`` is not started; the run is held.

Dollars are what a CLI reported, else what its tokens cost at ``[budget.prices]`` (an
estimate, said as one: ``magi.core.figures.pricing``). A turn with neither has no dollar figure,
so no dollar cap sees it: ``run_minutes`` caps the wall time of such turns instead, and
while it is unset the run says once, per kind of agent, which dollars it cannot count.
"""

from __future__ import annotations

from magi.core.figures.pricing import Spend, price_table, spend, turn_cost, unmetered_why, usd
from magi.model.run import Record, RunStatus
from magi.seats.context import SeatContext, Stop
from magi.seats.day_spend import source

_TODAY = "spent_today"  # sctx.cache: (day, Spend) of the other runs, read once per process


def run_spend(record: Record) -> Spend:
    """What the run's turns spent, at the run's own prices."""
    return spend(record.turns, price_table(record.config.budget.prices))


def spent_usd(record: Record) -> float:
    """The run's dollars, reported and estimated."""
    return run_spend(record).usd


def _spent_today_elsewhere(sctx: SeatContext) -> Spend:
    today = sctx.clock().date()
    cached = sctx.cache.get(_TODAY)
    if isinstance(cached, tuple) and cached[0] == today and isinstance(cached[1], Spend):
        return cached[1]
    found = source(sctx).spent(sctx, today, besides=sctx.record.id)
    sctx.cache[_TODAY] = (today, found)
    return found


def _unmetered(sctx: SeatContext) -> list[str]:
    """``kind: why`` for each kind of agent whose turns in this run have no dollar figure
    (kinds, not agents or seats: a budget line must not say who wrote which candidate)."""
    prices = price_table(sctx.config.budget.prices)
    found: dict[str, None] = {}
    for t in sctx.record.turns:
        if turn_cost(t.usage, prices) is None:
            agent = next((a for a in sctx.config.agents if a.id == t.agent), None)
            kind = agent.kind if agent is not None else "unknown"
            found[f"{kind}: {unmetered_why(t.usage, prices)}"] = None
    return list(found)


def _say_unmetered(sctx: SeatContext) -> None:
    """Once per reason: a dollar cap is set, run_minutes is not, and some turns escape it."""
    said = {e.message for e in sctx.record.events if e.node == "budget"}
    for line in _unmetered(sctx):
        message = (
            f"budget: turns with no dollar figure ({line}) are not counted by run_usd or "
            "day_usd; [budget] run_minutes caps their time, prices in [budget.prices]"
        )
        if message not in said:
            sctx.event("budget", message, "warn")


def check_budget(sctx: SeatContext) -> None:
    """Raise ``Stop(HELD)`` when the run or the day has reached its cap."""
    budget = sctx.config.budget
    here = run_spend(sctx.record)
    if budget.run_usd is not None and here.usd >= budget.run_usd:
        raise Stop(
            RunStatus.HELD,
            f"budget: this run has spent {usd(here.usd, here.estimated_usd)} "
            f"of its ${budget.run_usd:.2f} cap",
        )
    if budget.run_minutes is not None and here.unmetered_s / 60 >= budget.run_minutes:
        raise Stop(
            RunStatus.HELD,
            f"budget: turns with no dollar figure ({'; '.join(_unmetered(sctx))}) have taken "
            f"{here.unmetered_s / 60:.1f} of this run's {budget.run_minutes:g} minutes "
            "([budget] run_minutes)",
        )
    if budget.day_usd is not None:
        today = spend(sctx.record.turns, price_table(budget.prices), on=sctx.clock().date())
        day = _spent_today_elsewhere(sctx) + today
        if day.usd >= budget.day_usd:
            raise Stop(
                RunStatus.HELD,
                f"budget: {usd(day.usd, day.estimated_usd)} spent today "
                f"against the ${budget.day_usd:.2f} daily cap",
            )
    if budget.run_minutes is None and (budget.run_usd or budget.day_usd) and here.unmetered:
        _say_unmetered(sctx)
