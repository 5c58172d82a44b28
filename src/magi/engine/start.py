"""Starting and resuming runs: the record created, its context built, the pipeline driven."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from magi.agents.base import Agent, CancelToken
from magi.agents.registry import build_agent
from magi.config.load import load_config
from magi.core.seats.seating import assign_seats
from magi.core.text.bounds import check_task
from magi.core.text.sanitize import clean_task, redact_secrets, stored_original
from magi.errors import MagiError, UsageError
from magi.git.repo import Git
from magi.graph import PIPELINE, Context, Stage, execute
from magi.graph.guard import CompetitionGuard
from magi.model.config import Config
from magi.model.run import Event, Run, RunStatus, Task
from magi.seats import Reporter, SilentReporter, utcnow
from magi.seats.ask import RETRY_MARK
from magi.seats.census import RecordingToken
from magi.state.store import Store, new_run_id


def create(
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
    why: str | None = None,
) -> Run:
    """Record a new run (nothing has been spent yet). The original task text is kept as given,
    but for the values of the secrets it redacted: those are stored nowhere. ``why``: a
    warning its first record carries (why this run exists, when that needs saying)."""
    check_task(task, config.graph.task_max_bytes)  # before anything is recorded or spent
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
            original=stored_original(task, cleaned, sum(r.count for r in redactions), "task"),
            cleaned=cleaned,
            source=source,
            removed=removed,
            redactions=redactions,
        ),
        config=config,
        worktree_root=str(root / run_id),
    )
    if why:
        run.events.append(Event(at=now, node="run", message=why, level="warn"))
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
    agents: Mapping[str, Agent] | None = None,
    reporter: Reporter | None = None,
    cancel: CancelToken | None = None,
) -> Context:
    """A run executes with the config recorded in it (``run.config``)."""
    cfg = run.config
    token = cancel or RecordingToken()
    ctx = Context(
        record=run,
        store=store,
        config=cfg,
        git=Git(Path(run.repo), hooks_dir=store.run_dir(run.id) / "hooks"),
        agents=agents if agents is not None else build_agents(cfg),
        seating=assign_seats(cfg),
        environ=environ,
        reporter=reporter or SilentReporter(),
        cancel=token,
        guard=CompetitionGuard(),
    )
    if isinstance(token, RecordingToken):
        token.attach(ctx)  # every process the run starts is written into its record
    return ctx


def prepare_resume(run: Run, *, retry_failed: bool = False, now: datetime | None = None) -> None:
    """A stopped run carries on from where it stopped; only a finished one is refused.

    ``retry_failed`` (``--retry-failed``) also re-asks the seats that ended in error or
    timeout, and lets a failed run go on: a person who logged in after a run failed on auth
    should not have to pay again for the seats that did answer. What the failed turns said
    stays in the record; only the seats' verdicts are cleared.
    """
    if run.status.finished and not (retry_failed and run.status is RunStatus.FAILED):
        raise UsageError(f"run {run.id} is {run.status.value}; there is nothing to resume")
    if retry_failed:
        _clear_failed_seats(run, now or utcnow())
    if run.tally is not None and not run.tally.quorum:
        run.tally = None  # recomputed once the missing seats have answered
        run.deliberated = False  # a judge who was missing may split the panel when it answers
    run.reason = None


def _clear_failed_seats(run: Run, now: datetime) -> None:
    failed = ("error", "timeout")
    for c in run.candidates:
        if c.status in failed:
            c.status = "pending"
    run.judgements = [j for j in run.judgements if j.status not in failed]
    run.deliberation = [t for t in run.deliberation if t.status not in failed]
    run.votes = [v for v in run.votes if v.status not in failed]
    if run.tally is not None and not run.tally.winner:
        run.tally = None
    run.deliberated = False if not run.votes else run.deliberated
    # A review round left open by a fixer turn that failed is asked again in that round.
    rnd = run.review.rounds[-1] if run.review and run.review.rounds else None
    if rnd is not None and not rnd.closed and rnd.fix is not None and rnd.fix.status in failed:
        rnd.fix.status = "pending"
    # Agents that failed their login before this point are asked again (seats.failed_agents
    # counts only failures after the latest retry): the person may have logged in since.
    run.events.append(Event(at=now, node="run", message=RETRY_MARK))


def take_current_budget(
    run: Run, config_path: Path | None, environ: Mapping[str, str], reporter: Reporter
) -> None:
    """A resumed run keeps the config it started with, except [budget]: raising a cap is
    how a person lets a held run go on, so the cap in force now is the one that applies."""
    try:
        current = load_config(Path(run.repo), config_path=config_path, environ=environ)
    except MagiError as e:
        reporter.note(f"[budget] kept from the run's own config: {e.message}", "warn")
        return
    if run.config.budget != current.config.budget:
        run.config = run.config.model_copy(update={"budget": current.config.budget})
        reporter.note("[budget] taken from the current config")


def drive(ctx: Context, pipeline: Sequence[Stage] = PIPELINE) -> Run:
    """Run ``pipeline`` on ``ctx`` (the engine is the only caller of the runner)."""
    return execute(ctx, pipeline)


def now() -> datetime:
    return utcnow()
