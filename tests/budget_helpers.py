"""Set-up for the budget tests: a run record in a store, and a seat context around it."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from magi.agents.base import Agent
from magi.model.config import Config
from magi.model.run import Run, Task
from magi.seats import SeatContext, ensure_seat
from magi.seats.context import DaySpend
from magi.state.store import Store

NOW = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
RUN_ID = "20261129-115900-abcd"


def budget_config(agents: list[dict[str, Any]], **budget: Any) -> Config:
    """Agents (unjailed: these tests are about money, not the jail) under ``[budget]``."""
    return Config.model_validate({"agents": agents, "budget": budget, "sandbox": {"mode": "off"}})


def seat_context(
    home: Path,
    config: Config,
    agents: Mapping[str, Agent],
    *,
    repo: Path | None = None,
    run_id: str = RUN_ID,
    environ: Mapping[str, str] | None = None,
    day_spend: DaySpend | None = None,
) -> SeatContext:
    """A competition record (created in ``home``'s store) with one seat per agent."""
    run = Run(
        id=run_id,
        created_at=NOW,
        config=config,
        repo=str(repo or home),
        base="main",
        seed=1,
        task=Task(original="t", cleaned="t"),
    )
    store = Store(home)
    store.create(run)
    sctx = SeatContext(
        record=run,
        store=store,
        config=config,
        agents=agents,
        environ=dict(environ or {}),
        clock=lambda: NOW,
        day_spend=day_spend,
    )
    for i, agent_id in enumerate(agents):
        ensure_seat(sctx, f"impl-{chr(65 + i)}", agent_id)
    return sctx
