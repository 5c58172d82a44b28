"""Creating a run, driving it through PIPELINE, and resuming one that stopped."""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from magi.agents.base import Agent
from magi.agents.registry import build_agent
from magi.config.model import Config
from magi.core.sanitize import clean_task, redact_secrets
from magi.core.seating import assign_seats
from magi.errors import UsageError
from magi.git import Git
from magi.graph import NODE_STATUS, PIPELINE
from magi.graph.context import Context, Reporter, SilentReporter, Stop, utcnow
from magi.state.model import NodeTiming, Run, RunStatus, Task
from magi.state.store import Store, new_run_id


def create_run(
    *,
    task: str,
    source: str,
    config: Config,
    git: Git,
    store: Store,
    now: datetime,
    rng: random.Random,
    seed: int | None = None,
    base: str | None = None,
) -> Run:
    """Record a new run (nothing has been spent yet). The original task text is kept as given."""
    cleaned, removed = clean_task(task)
    cleaned, redactions = redact_secrets(cleaned, "task")
    if not cleaned.strip():
        raise UsageError("the task is empty")
    base = base or git.default_base()
    base_sha = git.rev_parse(base)
    if seed is None:
        seed = config.blind.seed if config.blind.seed is not None else rng.randrange(2**31)
    run_id = new_run_id(now, rng)
    for _ in range(16):
        # Another store (another MAGI_HOME) may have used this id on this repository already.
        if not git.branches(f"magi/{run_id}/"):
            break
        run_id = new_run_id(now, rng)
    root = (
        Path(config.graph.worktree_root).expanduser()
        if config.graph.worktree_root
        else (store.home / "worktrees")
    )
    run = Run(
        id=run_id,
        created_at=now,
        repo=str(git.root),
        base=base,
        base_sha=base_sha,
        seed=seed,
        task=Task(
            original=task, cleaned=cleaned, source=source, removed=removed, redactions=redactions
        ),
        config=config.model_dump(mode="json"),
        worktree_root=str(root / run_id),
    )
    store.create(run)
    return run


def build_agents(config: Config) -> dict[str, Agent]:
    return {
        a.id: build_agent(a, output_max_bytes=config.graph.output_max_bytes) for a in config.agents
    }


def context_for(
    run: Run,
    *,
    store: Store,
    environ: Mapping[str, str],
    config: Config | None = None,
    agents: Mapping[str, Agent] | None = None,
    reporter: Reporter | None = None,
) -> Context:
    """A run executes with the config it was created with (recorded in run.json)."""
    cfg = config or Config.model_validate(run.config)
    git = Git(Path(run.repo), hooks_dir=store.run_dir(run.id) / "hooks")
    return Context(
        run=run,
        store=store,
        config=cfg,
        git=git,
        agents=agents if agents is not None else build_agents(cfg),
        seating=assign_seats(cfg),
        environ=environ,
        reporter=reporter or SilentReporter(),
    )


def prepare_resume(run: Run) -> None:
    """A stopped run carries on from where it stopped; only a finished one is refused."""
    if run.status.finished:
        raise UsageError(f"run {run.id} is {run.status.value}; there is nothing to resume")
    if run.tally is not None and not run.tally.quorum:
        run.tally = None  # recomputed once the missing seats have answered
        run.deliberated = False  # a judge who was missing may split the panel when it answers
    run.reason = None


def execute(ctx: Context) -> Run:
    """Run every node in order; a Stop ends the run with its status and reason."""
    r = ctx.run
    try:
        for node in PIPELINE:
            name: str = node.NAME
            r.status = NODE_STATUS[name]
            started = ctx.clock()
            prior = r.timings.get(name)
            ctx.reporter.node(name)
            ctx.save()
            node.run(ctx)
            finished = ctx.clock()
            spent = (finished - started).total_seconds() + (
                (prior.seconds or 0.0) if prior else 0.0
            )
            r.timings[name] = NodeTiming(
                started_at=prior.started_at if prior else started,
                finished_at=finished,
                seconds=round(spent, 3),
            )
            ctx.save()
    except Stop as stop:
        r.status = stop.status
        r.reason = stop.reason
        ctx.event(
            "run",
            f"{stop.status.value}: {stop.reason}",
            "info" if stop.status is RunStatus.VERIFIED_NOOP else "warn",
        )
        ctx.save()
    return r


def now() -> datetime:
    return utcnow()
