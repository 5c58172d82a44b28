"""A run from a surface's point of view: start one, resume one, recount one, fold some."""

from __future__ import annotations

import random
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from magi.agents.base import Agent, CancelToken
from magi.core.person.notify import event_of, summary_of
from magi.engine.signals import interruptible
from magi.engine.start import (
    context_for,
    create,
    drive,
    prepare_resume,
    take_current_budget,
)
from magi.engine.start import (
    now as utc_now,
)
from magi.errors import MagiError, StateError, UsageError
from magi.git import refs_guard
from magi.git.repo import Git
from magi.git.salvage import discard_run
from magi.graph import PIPELINE, REVIEW_PIPELINE, Context, Stage
from magi.graph.fold import fold_all, remove_judge_worktrees
from magi.graph.tally import compute
from magi.model.config import Config
from magi.model.run import Run, RunStatus, Tally
from magi.sandbox.notify import send
from magi.seats import Cancelled, Reporter, SilentReporter
from magi.seats.census import end_leftovers
from magi.state.invariants import require_whole
from magi.state.lock import RunLockedError
from magi.state.store import RUN_ID, Store


@dataclass(frozen=True)
class Outcome:
    """How driving a run ended: its record, and the exit code of a signal that cut it short."""

    run: Run
    signal_exit: int | None = None


def _drive(ctx: Context, pipeline: Sequence[Stage], *, park_on_sigterm: bool = False) -> Outcome:
    # Agents a killed magi left running would write into the same worktrees: first they go.
    end_leftovers(ctx)
    ctx.store.clear_park(ctx.run.id)  # a request for an earlier drive is not for this one
    park = (lambda why: ctx.store.request_park(ctx.run.id, why)) if park_on_sigterm else None
    with interruptible(ctx.cancel, ctx.reporter, ctx.run.id, park=park) as caught:
        try:
            drive(ctx, pipeline)
        except Cancelled:
            return Outcome(ctx.run, caught.exit_code)
        finally:
            # However the run ended, no judge needs its tree any more (a resume that asks a
            # judge again makes it anew): failed runs once kept every judge's worktree.
            remove_judge_worktrees(ctx)
            end_leftovers(ctx)  # however the drive ended, no process of the run outlives it
            notify(ctx)
            # A long-lived process (the App's worker) drives many runs: give this one up.
            ctx.store.unlock(ctx.run.id)
    return Outcome(ctx.run)


def notify(ctx: Context) -> None:
    """``[notify] command``, told how the run ended; a failing notifier is recorded, ignored.

    Not in a runner's agents job (``GITHUB_ACTIONS``): the publish job tells it there, with
    the pull request's address, and an agents job is no place to run a program of the
    config's beside the agents.
    """
    command = ctx.config.notify.command
    if not command or ctx.environ.get("GITHUB_ACTIONS") == "true":
        return
    r = ctx.run
    fields = {
        "summary": summary_of(r.id, r.status.value, r.reason),
        "run": r.id,
        "url": ctx.environ.get("MAGI_WEB_URL", ""),
        "event": event_of(r.status.value),
    }
    why = send(command, fields, ctx.environ)
    if why is not None:
        ctx.event("notify", f"{why}; the run is not affected", "warn")
        ctx.save()


def start(
    *,
    task: str,
    source: str,
    config: Config,
    git: Git,
    store: Store,
    environ: Mapping[str, str],
    reporter: Reporter | None = None,
    seed: int | None = None,
    base: str | None = None,
    rng: random.Random | None = None,
    now: datetime | None = None,
    agents: Mapping[str, Agent] | None = None,
    pipeline: Sequence[Stage] = PIPELINE,
    cancel: CancelToken | None = None,
    park_on_sigterm: bool = False,
    why: str | None = None,
) -> Outcome:
    """Create a run of ``task`` and drive it through ``pipeline``; ``cancel`` is its token.
    ``park_on_sigterm``: a first SIGTERM parks the run at its next node boundary instead of
    ending the seats that are out (a second one ends them). ``why``: a warning the run's
    record carries from its first save (why this run exists, when that needs saying)."""
    reporter = reporter or SilentReporter()
    run = create(
        task=task,
        source=source,
        config=config,
        git=git,
        store=store,
        now=now or utc_now(),
        rng=rng or random.Random(),
        seed=seed,
        base=base,
        why=why,
    )
    reporter.note(f"run {run.id}: seed {run.seed}, base {run.base} ({(run.base_sha or '')[:10]})")
    ctx = context_for(
        run, store=store, environ=environ, agents=agents, reporter=reporter, cancel=cancel
    )
    return _drive(ctx, pipeline, park_on_sigterm=park_on_sigterm)


def resume(
    store: Store,
    ref: str,
    *,
    environ: Mapping[str, str],
    reporter: Reporter | None = None,
    config_path: Path | None = None,
    agents: Mapping[str, Agent] | None = None,
    pipeline: Sequence[Stage] = PIPELINE,
    cancel: CancelToken | None = None,
    retry_failed: bool = False,
    park_on_sigterm: bool = False,
) -> Outcome:
    """Carry a stopped run on from its record; finished seats are not asked again
    (``retry_failed``: seats that ended in error or timeout are, and a failed run goes on)."""
    reporter = reporter or SilentReporter()
    run_id = store.resolve(ref)
    # One process per run: a live one is refused (naming it) before its record is even read.
    store.lock(run_id)
    try:
        run = store.load_run(run_id)
        require_whole(run)  # a record missing what the next node needs: nothing is spent
        if pipeline is PIPELINE and run.task.source.startswith("review:"):
            pipeline = REVIEW_PIPELINE  # a `magi review` run has no competition to re-enter
        prepare_resume(run, retry_failed=retry_failed)
    except BaseException:
        store.unlock(run_id)
        raise
    take_current_budget(run, config_path, environ, reporter)
    ctx = context_for(
        run, store=store, environ=environ, agents=agents, reporter=reporter, cancel=cancel
    )
    ctx.event("run", f"resumed from {run.status.value}")
    return _drive(ctx, pipeline, park_on_sigterm=park_on_sigterm)


def moved_heads(run: Run) -> list[str]:
    """Candidate branches that no longer point at the head recorded for them (report only)."""
    heads = {c.branch: c.head for c in run.candidates if c.head and c.produced}
    return refs_guard.pin(Git(Path(run.repo)), heads, fix=False)


def recount(store: Store, ref: str, environ: Mapping[str, str]) -> tuple[Run, Tally]:
    """The stored run and the tally its stored judgements and votes imply now."""
    run = store.load_run(store.resolve(ref))
    if run.tally is None:
        raise StateError(f"run {run.id} has no tally yet (status {run.status.value})")
    return run, compute(context_for(run, store=store, environ=environ, agents={}))


@dataclass(frozen=True)
class Folded:
    run_id: str
    removed: list[str] = field(default_factory=list)
    skipped: str | None = None  # why nothing was removed
    kept: list[str] = field(default_factory=list)  # "<branch>: why it stays"


def fold(
    store: Store,
    ref: str | None,
    *,
    all_runs: bool,
    environ: Mapping[str, str],
    force: bool = False,
    cwd: Path | None = None,
) -> list[Folded]:
    """``magi fold``: one run's worktrees and losing branches, or every finished run's.

    A live run (another process holds its lock) is skipped. A run that can still resume
    keeps its branches unless ``force``. With ``force``, a run whose record cannot be read
    is removed by its id alone, from the repository at ``cwd`` (``magi.git.salvage``).
    """
    if all_runs == (ref is not None):
        raise UsageError("name one run, or pass --all")
    ids = store.list_ids() if all_runs else [_fold_id(store, ref or "", force)]
    out: list[Folded] = []
    for run_id in ids:
        try:
            store.lock(run_id)
        except RunLockedError as e:
            out.append(Folded(run_id, skipped=e.message))
            continue
        except StateError:
            pass  # no directory at all: only the salvage below can act on it
        try:
            record = store.load_run(run_id)
        except MagiError as e:
            if force and not all_runs:
                removed, kept = _salvage(store, run_id, cwd)
                out.append(Folded(run_id, removed=removed, kept=kept))
            else:
                hint = f"; `magi fold --force {run_id}` removes what git holds of it"
                out.append(Folded(run_id, skipped=e.message + hint))
            continue
        if all_runs and not record.status.finished and record.status is not RunStatus.STALLED:
            out.append(
                Folded(run_id, skipped=f"{record.status.value} (fold it by name to discard it)")
            )
            continue
        ctx = context_for(record, store=store, environ=environ, agents={})
        try:
            removed, kept = fold_all(ctx, force=force)
            removed += _seat_states(store, run_id, record.status.finished or force)
            out.append(Folded(run_id, removed=removed, kept=kept))
        finally:
            store.unlock(run_id)
    return out


def _seat_states(store: Store, run_id: str, done: bool) -> list[str]:
    """The seats' own copies of their CLIs' state (their sessions; never a login, which
    leaves a copy after every turn): gone with a run that will not resume."""
    where = store.run_dir(run_id) / "cli-state"
    if not done or not where.is_dir():
        return []
    shutil.rmtree(where)
    return [f"{where} (the seats' CLI sessions)"]


def _fold_id(store: Store, ref: str, force: bool) -> str:
    """A run id to fold: resolved from the store, or given whole (a record that is gone)."""
    try:
        return store.resolve(ref)
    except StateError:
        if force and RUN_ID.fullmatch(ref.strip()):
            return ref.strip()
        raise


def _salvage(store: Store, run_id: str, cwd: Path | None) -> tuple[list[str], list[str]]:
    git = Git.discover(cwd or Path.cwd())
    return discard_run(git, run_id, [store.home / "worktrees"])
