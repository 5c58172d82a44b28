"""Starting and resuming a council against real agents: record, evidence, port, engine.

A resumed council keeps the config, panel, personalities and evidence it started with
(all in its record); finished seats are not asked again (``council.rounds``).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from magi.agents.base import Agent
from magi.agents.registry import build_agent
from magi.config.model import Config
from magi.core.council_prompts import Evidence
from magi.council.asker import AgentAsker, Asker
from magi.council.modes import run_council
from magi.council.rounds import Council
from magi.council.setup import load_evidence, new_council, store_evidence
from magi.state.council import CouncilRun, create_council, load_council, save_council
from magi.state.store import Store

__all__ = ["record_path", "resume", "start"]


def _now() -> datetime:
    return datetime.now(UTC)


def record_path(store: Store, rec: CouncilRun) -> str:
    return str(store.run_dir(rec.id) / "run.json")


def _agents(config: Config, rec: CouncilRun) -> dict[str, Agent]:
    wanted = {s.agent for s in rec.seated()} | ({rec.clerk} if rec.clerk else set())
    return {
        a.id: build_agent(a, output_max_bytes=config.graph.output_max_bytes)
        for a in config.agents
        if a.id in wanted
    }


def _drive(
    store: Store,
    rec: CouncilRun,
    config: Config,
    evidence: list[Evidence],
    *,
    cwd: Path,
    asker: Asker | None,
    agents: Mapping[str, Agent] | None,
    clock: Callable[[], datetime],
) -> CouncilRun:
    lock = threading.RLock()
    if asker is None:
        asker = AgentAsker(
            rec=rec,
            store=store,
            agents=agents if agents is not None else _agents(config, rec),
            cwd=cwd,
            timeout=float(config.council.timeout),
            clock=clock,
            lock=lock,
            sessions=config.graph.sessions,
        )
    council = Council(
        rec=rec,
        ask=asker,
        save=lambda: save_council(store, rec),
        max_parallel=config.council.max_parallel,
        clock=clock,
        lock=lock,
        evidence=evidence,
    )
    return run_council(council)


def start(
    store: Store,
    *,
    question: str,
    source: str,
    mode: str,
    config: Config,
    panel: str | None = None,
    missing: Mapping[str, str] | None = None,
    evidence: Sequence[tuple[str, str, str]] = (),
    risk: str | None = None,
    cwd: Path | None = None,
    asker: Asker | None = None,
    agents: Mapping[str, Agent] | None = None,
    clock: Callable[[], datetime] = _now,
    rand: random.Random | None = None,
) -> CouncilRun:
    """Create the council record and run it to a verdict (or to no council, with why)."""
    rec, bodies = new_council(
        question=question,
        source=source,
        mode=mode,
        config=config,
        panel=panel,
        missing=missing or {},
        evidence=evidence,
        now=clock(),
        rand=rand or random.Random(),
        risk=risk,
    )
    create_council(store, rec)
    store_evidence(store, rec, bodies)
    if rec.verdict is not None:
        return rec
    return _drive(
        store, rec, config, bodies, cwd=cwd or Path.cwd(), asker=asker, agents=agents, clock=clock
    )


def resume(
    store: Store,
    run_id: str,
    *,
    cwd: Path | None = None,
    asker: Asker | None = None,
    agents: Mapping[str, Agent] | None = None,
    clock: Callable[[], datetime] = _now,
) -> CouncilRun:
    """Continue a council from its record: the config it started with, finished seats kept."""
    rec = load_council(store, run_id)
    config = Config.model_validate(rec.config)
    evidence = load_evidence(store, rec)
    return _drive(
        store, rec, config, evidence, cwd=cwd or Path.cwd(), asker=asker, agents=agents, clock=clock
    )
