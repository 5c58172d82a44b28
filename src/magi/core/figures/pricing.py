"""Dollars from usage: a CLI's own cost where it reports one, else tokens times a price.

A turn has a dollar figure when its CLI reported a cost (``Usage.cost_usd``: *reported*) or
when it reported tokens by model (``Usage.models``) and every one of those models has a
price (*estimated*). A turn with neither has no figure: its wall time is what
``[budget] run_minutes`` counts. A model without a price never borrows another's: a guess
under a name nobody chose would read as a fact.

The price table is ``DEFAULT_PRICES`` under the config's ``[budget.prices."<model>"]``,
keyed by the exact model name the CLI reports (gemini names each model in its stats) or,
for a CLI whose output names none (codex, agy), the agent's configured ``model``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date

from magi.model.config import Price
from magi.model.run import Turn, Usage

__all__ = [
    "DEFAULT_PRICES",
    "Cost",
    "Spend",
    "price_table",
    "spend",
    "turn_cost",
    "unmetered_why",
    "usd",
]

# US dollars per million tokens: the list prices OpenAI (platform.openai.com/docs/pricing)
# and Google (ai.google.dev/gemini-api/docs/pricing) published in late 2025, for the models
# the codex, gemini and antigravity adapters run; not re-checked since (no network where
# this was written). Estimates only: a plan or a discount changes what is really paid.
# Where a rate has tiers (Gemini's above 200k prompt tokens) the first tier is kept; where
# one was cut later (Gemini's cache reads) the earlier, higher rate is.
# Override any of them, or add a model, in `[budget.prices."<model>"]`.
DEFAULT_PRICES: Mapping[str, Price] = {
    "gpt-5": Price(input=1.25, cached=0.125, output=10.0),
    "gpt-5-codex": Price(input=1.25, cached=0.125, output=10.0),
    "gpt-5-mini": Price(input=0.25, cached=0.025, output=2.0),
    "gpt-5.1": Price(input=1.25, cached=0.125, output=10.0),
    "gpt-5.1-codex": Price(input=1.25, cached=0.125, output=10.0),
    "gpt-5.1-codex-max": Price(input=1.25, cached=0.125, output=10.0),
    "gpt-5.1-codex-mini": Price(input=0.25, cached=0.025, output=2.0),
    "gemini-2.5-pro": Price(input=1.25, cached=0.31, output=10.0),
    "gemini-2.5-flash": Price(input=0.30, cached=0.075, output=2.50),
    "gemini-2.5-flash-lite": Price(input=0.10, cached=0.025, output=0.40),
    "gemini-3-pro-preview": Price(input=2.0, cached=0.20, output=12.0),
}
_PER = 1_000_000


def price_table(overrides: Mapping[str, Price]) -> dict[str, Price]:
    """``DEFAULT_PRICES`` with the config's own prices over them."""
    return {**DEFAULT_PRICES, **overrides}


@dataclass(frozen=True)
class Cost:
    usd: float
    estimated: bool  # tokens x price, not the CLI's own figure


def turn_cost(usage: Usage, prices: Mapping[str, Price]) -> Cost | None:
    """The turn's dollars; None when it has no figure (see the module docstring)."""
    if usage.cost_usd is not None:
        return Cost(usage.cost_usd, estimated=False)
    if not usage.models or any(name not in prices for name in usage.models):
        return None
    total = 0.0
    for name, t in usage.models.items():
        p = prices[name]
        cached = p.input if p.cached is None else p.cached
        total += (t.input * p.input + t.cached * cached + t.output * p.output) / _PER
    return Cost(total, estimated=True)


def unmetered_why(usage: Usage, prices: Mapping[str, Price]) -> str:
    """Why a turn without a figure has none, in a few words."""
    unpriced = sorted(name for name in usage.models if name not in prices)
    if unpriced:
        return "no price for model " + ", ".join(repr(n) for n in unpriced)
    if usage.input_tokens is not None or usage.output_tokens is not None:
        return "tokens, but no model named (set the agent's `model`)"
    return "no cost or tokens reported"


@dataclass(frozen=True)
class Spend:
    """Dollars and unmetered time over some turns."""

    reported_usd: float = 0.0
    estimated_usd: float = 0.0
    unmetered_s: float = 0.0  # wall seconds of turns with no dollar figure
    metered: int = 0  # turns with a figure
    unmetered: int = 0  # turns without one

    @property
    def usd(self) -> float:
        return self.reported_usd + self.estimated_usd

    def __add__(self, other: Spend) -> Spend:
        return Spend(
            reported_usd=self.reported_usd + other.reported_usd,
            estimated_usd=self.estimated_usd + other.estimated_usd,
            unmetered_s=self.unmetered_s + other.unmetered_s,
            metered=self.metered + other.metered,
            unmetered=self.unmetered + other.unmetered,
        )


def spend(turns: Iterable[Turn], prices: Mapping[str, Price], *, on: date | None = None) -> Spend:
    """What ``turns`` spent (only those started ``on`` that day, when given)."""
    total = Spend()
    for t in turns:
        if on is not None and t.started_at.date() != on:
            continue
        cost = turn_cost(t.usage, prices)
        if cost is None:
            total += Spend(unmetered_s=t.duration_s, unmetered=1)
        elif cost.estimated:
            total += Spend(estimated_usd=cost.usd, metered=1)
        else:
            total += Spend(reported_usd=cost.usd, metered=1)
    return total


def usd(total: float, estimated: float = 0.0, places: int = 2) -> str:
    """``$0.42`` when every cent was reported; ``~$0.42 est.`` when all of it is an
    estimate; ``~$0.42 ($0.10 est.)`` when part of it is."""
    if estimated <= 0:
        return f"${total:.{places}f}"
    if estimated >= total:
        return f"~${total:.{places}f} est."
    return f"~${total:.{places}f} (${estimated:.{places}f} est.)"
