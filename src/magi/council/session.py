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

from magi.agents.base import Agent, CancelToken
from magi.agents.registry import build_agent
from magi.core.council.prompts import Evidence
from magi.council.asker import AgentAsker, Asker
from magi.council.modes import run_council
from magi.council.rounds import Council
from magi.council.setup import load_evidence, new_council, store_evidence
from magi.model.config import Config
from magi.model.run import RunStatus
from magi.seats import Cancelled, Reporter, SeatContext, SilentReporter
from magi.state.council import CouncilRun, load_council
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
    environ: Mapping[str, str],
    cancel: CancelToken | None,
    reporter: Reporter | None = None,
) -> CouncilRun:
    lock = threading.RLock()
    if asker is None:
        sctx = SeatContext(
            record=rec,
            store=store,
            config=config,
            agents=agents if agents is not None else _agents(config, rec),
            environ=environ,
            cancel=cancel or CancelToken(),
            reporter=reporter or SilentReporter(),
            clock=clock,
            lock=lock,
        )
        asker = AgentAsker(sctx=sctx, cwd=cwd, timeout=float(config.council.timeout))
    council = Council(
        rec=rec,
        ask=asker,
        save=lambda: store.save(rec),
        max_parallel=config.council.max_parallel,
        clock=clock,
        lock=lock,
        evidence=evidence,
        on_phase=reporter.node if reporter is not None else lambda _name: None,
        notes=config.prompts.all,
    )
    try:
        return run_council(council)
    except Cancelled:
        with lock:
            rec.status = RunStatus.INTERRUPTED
            rec.reason = "interrupted; magi council --resume continues it"
            store.save(rec)
        raise


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
    environ: Mapping[str, str] | None = None,
    cancel: CancelToken | None = None,
    reporter: Reporter | None = None,
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
    store.create(rec)
    store_evidence(store, rec, bodies)
    if rec.verdict is not None:
        return rec
    return _drive(
        store,
        rec,
        config,
        bodies,
        cwd=cwd or Path.cwd(),
        asker=asker,
        agents=agents,
        clock=clock,
        environ=environ if environ is not None else {},
        cancel=cancel,
        reporter=reporter,
    )


def resume(
    store: Store,
    run_id: str,
    *,
    cwd: Path | None = None,
    asker: Asker | None = None,
    agents: Mapping[str, Agent] | None = None,
    clock: Callable[[], datetime] = _now,
    environ: Mapping[str, str] | None = None,
    cancel: CancelToken | None = None,
    reporter: Reporter | None = None,
) -> CouncilRun:
    """Continue a council from its record: the config it started with, finished seats kept."""
    rec = load_council(store, run_id)
    config = rec.config
    evidence = load_evidence(store, rec)
    return _drive(
        store,
        rec,
        config,
        evidence,
        cwd=cwd or Path.cwd(),
        asker=asker,
        agents=agents,
        clock=clock,
        environ=environ if environ is not None else {},
        cancel=cancel,
        reporter=reporter,
    )
