"""Competition commands: ``run``, ``tally --verify``, ``fold`` and ``demo``."""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand

from magi.cli import app, config_path, console, emit
from magi.errors import MagiError, PreflightError, StateError, UsageError
from magi.state.model import Run, RunStatus

if TYPE_CHECKING:  # imported lazily at run time, so `magi --help` stays quick
    from magi.config.model import Config
    from magi.graph.context import Reporter

# Exit codes of `magi run` by how the run ended (after the report is printed).
RUN_EXIT: dict[RunStatus, int] = {
    RunStatus.READY: 0,
    RunStatus.MERGED: 0,
    RunStatus.VERIFIED_NOOP: 0,
    RunStatus.FAILED: 1,
    RunStatus.BLOCKED: 10,
    RunStatus.STALLED: 11,
    RunStatus.HELD: 12,
}


class RunCommand(TyperCommand):
    """Remembers where ``--`` stood: after it, a first word that names a subcommand is the task."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # typer vendors click's Context
        ctx.meta["magi.dashdash"] = args.index("--") if "--" in args else None
        return list(super().parse_args(ctx, args))


def _preflight(explicit: Path | None, reporter: Reporter) -> Config:
    """Everything `magi doctor` checks, before anything is spent; every problem at once."""
    from magi.cli.diagnose import diagnose

    d = diagnose(Path.cwd(), explicit, os.environ)
    errors = [p for p in d.problems if p.severity == "error"]
    for p in d.problems:
        if p.severity == "warning":
            reporter.note(p.message, "warn")
    if errors or d.config is None:
        lines = "\n".join(f"  {p.message}" for p in errors) or "  (no config could be resolved)"
        raise PreflightError(
            f"the run cannot start:\n{lines}\n`magi doctor` shows the whole picture",
            d.exit_code or 1,
        )
    return d.config


def _take_current_budget(record: Run, explicit: Path | None, reporter: Reporter) -> None:
    """A resumed run keeps the config it started with, except [budget]: raising a cap is
    how a person lets a held run go on, so the cap in force now is the one that applies."""
    from magi.config.load import load_config
    from magi.config.model import Config

    try:
        current = load_config(Path(record.repo), config_path=explicit, environ=os.environ)
    except MagiError as e:
        reporter.note(f"[budget] kept from the run's own config: {e.message}", "warn")
        return
    cfg = Config.model_validate(record.config)
    if cfg.budget != current.config.budget:
        record.config = cfg.model_copy(update={"budget": current.config.budget}).model_dump(
            mode="json"
        )
        reporter.note("[budget] taken from the current config")


@contextlib.contextmanager
def _interruptible(reporter: Reporter, run_id: str) -> Iterator[None]:
    """Ctrl-C ends the seats that are out (they run in their own sessions, out of the
    terminal's reach) and leaves the run resumable; a second Ctrl-C is Python's own."""
    from magi.agents.process import interrupt_all

    def on_sigint(_sig: int, _frame: object) -> None:
        signal.signal(signal.SIGINT, previous)
        interrupt_all()
        reporter.note(f"interrupted: resume with  magi run --resume {run_id}", "warn")
        raise KeyboardInterrupt

    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread():
        yield  # signals only reach the main thread (e.g. the test runner's)
        return
    signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _finish(run: Run) -> None:
    from magi.report import render

    emit(render(run))
    code = RUN_EXIT.get(run.status, 1)
    if code:
        raise typer.Exit(code)


def _task_text(ctx: typer.Context, words: list[str], file: Path | None) -> tuple[str, str]:
    if file is not None:
        if words:
            raise UsageError("give the task as words or with --file, not both")
        try:
            return file.read_text(encoding="utf-8"), f"file:{file}"
        except OSError as e:
            raise UsageError(f"cannot read the task file {file}: {e.strerror}") from e
    if not words:
        raise UsageError('no task: magi run "what to build", or --file task.md')
    dashdash = ctx.meta.get("magi.dashdash")
    group = ctx.parent.command if ctx.parent else None
    names = set(getattr(group, "commands", {}) or {})
    if dashdash is None and words[0] in names:
        # `magi run show 3cbf` would pay agents to implement the sentence "show 3cbf".
        raise UsageError(
            f"'{words[0]}' is a magi command; this looks like a typo for `magi {words[0]} ...`. "
            f"If it really is the task, write: magi run -- {' '.join(words)}"
        )
    return " ".join(words), "cli"


@app.command(cls=RunCommand, context_settings={"ignore_unknown_options": False})
def run(
    ctx: typer.Context,
    words: Annotated[list[str] | None, typer.Argument(help="The task, as words.")] = None,
    file: Annotated[
        Path | None, typer.Option("--file", "-f", help="Read the task from a file.")
    ] = None,
    resume: Annotated[str | None, typer.Option("--resume", help="Continue a stopped run.")] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Reproduce a label assignment.")
    ] = None,
    base: Annotated[str | None, typer.Option("--base", help="Branch to start from.")] = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="Use this config file alone.")
    ] = None,
) -> None:
    """Hold a competition on the task: implement, verify, judge blind, deliberate, vote, tally."""
    from magi.cli.progress import TerminalReporter
    from magi.git import Git
    from magi.graph.runner import context_for, create_run, execute, now, prepare_resume
    from magi.state.store import Store, magi_home

    store = Store(magi_home())
    reporter = TerminalReporter(console())
    try:
        if resume is not None:
            if words or file:
                raise UsageError("--resume continues a recorded task; give no new task with it")
            record = store.load(store.resolve(resume))
            prepare_resume(record)
            _take_current_budget(record, config_path(ctx, config), reporter)
            ctx_ = context_for(record, store=store, environ=os.environ, reporter=reporter)
            ctx_.event("run", f"resumed from {record.status.value}")
        else:
            text, source = _task_text(ctx, list(words or []), file)
            cfg = _preflight(config_path(ctx, config), reporter)
            git = Git.discover(Path.cwd())
            record = create_run(
                task=text,
                source=source,
                config=cfg,
                git=git,
                store=store,
                now=now(),
                rng=random.Random(),
                seed=seed,
                base=base,
            )
            ctx_ = context_for(
                record, store=store, environ=os.environ, config=cfg, reporter=reporter
            )
            reporter.note(
                f"run {record.id}: seed {record.seed}, base {record.base} "
                f"({(record.base_sha or '')[:10]})"
            )
        with _interruptible(reporter, ctx_.run.id):
            execute(ctx_)
    finally:
        reporter.close()
    _finish(ctx_.run)


@app.command()
def tally(
    ref: Annotated[str, typer.Argument(help="Run id or unique prefix.")],
    verify: Annotated[
        bool, typer.Option("--verify", help="Recompute from the record and compare.")
    ] = True,
) -> None:
    """Recompute a run's tally from its stored judgements and votes, and compare."""
    from magi.graph.runner import context_for
    from magi.graph.tally import compute
    from magi.state.store import Store, magi_home

    store = Store(magi_home())
    record = store.load(store.resolve(ref))
    if record.tally is None:
        raise StateError(f"run {record.id} has no tally yet (status {record.status.value})")
    ctx_ = context_for(record, store=store, environ=os.environ, agents={})
    again = compute(ctx_)
    stored = record.tally.model_dump()
    fresh = again.model_dump()
    if stored == fresh:
        typer.echo(
            f"run {record.id}: tally verified — winner {again.winner or 'none'} ({again.reason})"
        )
        return
    typer.echo(f"run {record.id}: the stored tally does NOT match a recount", err=True)
    for key in sorted(set(stored) | set(fresh)):
        if stored.get(key) != fresh.get(key):
            typer.echo(f"  {key}: stored {stored.get(key)!r}, recount {fresh.get(key)!r}", err=True)
    raise typer.Exit(1)


@app.command()
def fold(
    ref: Annotated[str | None, typer.Argument(help="Run id or unique prefix.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Fold every finished run.")] = False,
) -> None:
    """Remove a run's worktrees and its losing branches (the winner's branch stays)."""
    from magi.graph.fold import fold_all
    from magi.graph.runner import context_for
    from magi.state.store import Store, magi_home

    store = Store(magi_home())
    if all_ == (ref is not None):
        raise UsageError("name one run, or pass --all")
    ids = store.list_ids() if all_ else [store.resolve(ref or "")]
    for run_id in ids:
        try:
            record = store.load(run_id)
        except MagiError as e:
            typer.echo(f"skip {run_id}: {e.message}", err=True)
            continue
        if all_ and not record.status.finished and record.status is not RunStatus.STALLED:
            typer.echo(f"skip {run_id}: {record.status.value} (fold it by name to discard it)")
            continue
        removed = fold_all(context_for(record, store=store, environ=os.environ, agents={}))
        typer.echo(f"folded {run_id}: removed {len(removed)} worktrees and branches")


@app.command()
def demo(
    where: Annotated[
        Path | None, typer.Option("--dir", help="Where to build the scratch repo.")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Label seed for the demo run.")] = 7,
) -> None:
    """A complete competition offline: scratch repo, scripted agents, the report at the end."""
    from magi.cli.progress import TerminalReporter
    from magi.testing.demo import run_demo

    reporter = TerminalReporter(console())
    try:
        record, home = run_demo(where, seed=seed, reporter=reporter, python=sys.executable)
    finally:
        reporter.close()
    from magi.report import render

    emit(render(record))
    typer.echo(f"\nThe demo's repository and records are under {home}.")
    # `make demo` runs .venv/bin/magi, which a fresh shell does not have on PATH.
    exe = "magi" if shutil.which("magi") else sys.argv[0]
    typer.echo(f"See it again with:  MAGI_HOME={home / 'magi-home'} {exe} show {record.id}")
    code = RUN_EXIT.get(record.status, 1)
    if code:
        raise typer.Exit(code)
