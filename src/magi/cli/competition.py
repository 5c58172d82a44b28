"""Competition commands: ``run``, ``tally --verify``, ``fold`` and ``demo``."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from magi.cli.app import app, config_path, console, emit
from magi.errors import ExitCode, UsageError
from magi.model.run import Run, RunStatus

# Exit codes of `magi run` by how the run ended (after the report is printed).
RUN_EXIT: dict[RunStatus, ExitCode] = {
    RunStatus.READY: ExitCode.OK,
    RunStatus.MERGED: ExitCode.OK,
    RunStatus.VERIFIED_NOOP: ExitCode.OK,
    RunStatus.FAILED: ExitCode.FAILED,
    RunStatus.BLOCKED: ExitCode.BLOCKED,
    RunStatus.STALLED: ExitCode.STALLED,
    RunStatus.HELD: ExitCode.HELD,
    RunStatus.PARKED: ExitCode.PARKED,
    RunStatus.ASKING: ExitCode.ASKING,
    RunStatus.HANDED_OFF: ExitCode.HANDED_OFF,
}
# (Ctrl-C, SIGTERM and SIGHUP leave the run `interrupted`; magi exits 128 + the signal.)


class RunCommand(TyperCommand):
    """Remembers where ``--`` stood: after it, a first word that names a subcommand is the task."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # typer vendors click's Context
        ctx.meta["magi.dashdash"] = args.index("--") if "--" in args else None
        return list(super().parse_args(ctx, args))


def _finish(run: Run, signal_exit: int | None = None) -> None:
    from magi.report import render

    emit(render(run))
    code = signal_exit if signal_exit is not None else RUN_EXIT.get(run.status, 1)
    if code:
        raise typer.Exit(code)


def _task_text(ctx: typer.Context, words: list[str], file: Path | None) -> tuple[str, str]:
    from magi.core.text.bounds import decode_task

    if file is not None:
        if words:
            raise UsageError("give the task as words or with --file, not both")
        try:
            data = file.read_bytes()
        except OSError as e:
            raise UsageError(f"cannot read the task file {file}: {e.strerror}") from e
        return decode_task(data, f"the task file {file}"), f"file:{file}"
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
    retry_failed: Annotated[
        bool,
        typer.Option(
            "--retry-failed",
            help="With --resume: ask again the seats that ended in error or timeout.",
        ),
    ] = False,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Reproduce a label assignment.")
    ] = None,
    base: Annotated[str | None, typer.Option("--base", help="Branch to start from.")] = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="Use this config file alone.")
    ] = None,
    no_auth_check: Annotated[
        bool,
        typer.Option(
            "--no-auth-check", help="Do not ask the agent CLIs whether they are logged in."
        ),
    ] = False,
    task_max_bytes: Annotated[
        int | None,
        typer.Option(
            "--task-max-bytes", min=1, help="Allow a longer task ([graph] task_max_bytes)."
        ),
    ] = None,
    park: Annotated[
        bool,
        typer.Option(
            "--park",
            help="A SIGTERM parks the run at its next node boundary (the seats that are out "
            "finish their turn) instead of ending them; a second signal ends them.",
        ),
    ] = False,
) -> None:
    """Hold a competition on the task: implement, verify, judge blind, deliberate, vote, tally."""
    from magi import engine
    from magi.cli.progress import TerminalReporter
    from magi.git.repo import Git
    from magi.state.store import Store, magi_home

    store = Store(magi_home())
    reporter = TerminalReporter(console())
    explicit = config_path(ctx, config)
    try:
        if resume is not None:
            if words or file:
                raise UsageError("--resume continues a recorded task; give no new task with it")
            from magi.agents.census import become_subreaper

            become_subreaper()
            outcome = engine.resume(
                store,
                resume,
                environ=os.environ,
                reporter=reporter,
                config_path=explicit,
                retry_failed=retry_failed,
                park_on_sigterm=park,
            )
        else:
            if retry_failed:
                raise UsageError("--retry-failed goes with --resume RUN")
            from magi.agents.census import become_subreaper

            text, source = _task_text(ctx, list(words or []), file)
            cfg = engine.preflight(
                Path.cwd(), explicit, os.environ, reporter, auth_check=not no_auth_check
            )
            if task_max_bytes is not None:
                graph = cfg.graph.model_copy(update={"task_max_bytes": task_max_bytes})
                cfg = cfg.model_copy(update={"graph": graph})
            become_subreaper()  # descendants that leave their session are still found
            outcome = engine.start(
                task=text,
                source=source,
                config=cfg,
                git=Git.discover(Path.cwd()),
                store=store,
                environ=os.environ,
                reporter=reporter,
                seed=seed,
                base=base,
                park_on_sigterm=park,
            )
    finally:
        reporter.close()
    _finish(outcome.run, outcome.signal_exit)


@app.command()
def park(
    ref: Annotated[str, typer.Argument(help="Run id or unique prefix of a running run.")],
) -> None:
    """Park a running run at its next node boundary: the seats that are out finish their
    turn and are kept; `magi run --resume RUN` carries it on. Spends nothing."""
    from magi.errors import StateError
    from magi.state.lock import RunLockedError
    from magi.state.store import Store, magi_home

    store = Store(magi_home())
    run_id = store.resolve(ref)
    try:
        store.lock(run_id)
    except RunLockedError:
        store.request_park(run_id, "magi park")
        typer.echo(
            f"run {run_id} parks at its next node boundary (the seats that are out finish "
            f"their turn); then  magi run --resume {run_id}"
        )
        return
    store.unlock(run_id)
    status = store.load_run(run_id).status.value
    raise StateError(f"run {run_id} is not running ({status}): there is nothing to park")


@app.command()
def tally(
    ref: Annotated[str, typer.Argument(help="Run id or unique prefix.")],
    verify: Annotated[
        bool, typer.Option("--verify", help="Recompute from the record and compare.")
    ] = False,
) -> None:
    """Print a run's stored tally; with --verify, recount it from the stored votes and compare."""
    from magi import engine
    from magi.state.store import Store, magi_home

    record, again = engine.recount(Store(magi_home()), ref, os.environ)
    assert record.tally is not None  # noqa: S101 - recount refuses a run without one
    if not verify:
        t = record.tally
        typer.echo(f"run {record.id}: winner {t.winner or 'none'} ({t.reason})")
        return
    stored = record.tally.model_dump()
    fresh = again.model_dump()
    moved = engine.moved_heads(record)
    if stored == fresh and not moved:
        typer.echo(
            f"run {record.id}: tally verified — winner {again.winner or 'none'} ({again.reason}); "
            "every candidate branch is at its recorded head"
        )
        return
    if stored != fresh:
        typer.echo(f"run {record.id}: the stored tally does NOT match a recount", err=True)
    for key in sorted(set(stored) | set(fresh)):
        if stored.get(key) != fresh.get(key):
            typer.echo(f"  {key}: stored {stored.get(key)!r}, recount {fresh.get(key)!r}", err=True)
    if moved:
        typer.echo(
            f"run {record.id}: candidate branches moved since they were judged "
            "(what merges would not be what was judged):",
            err=True,
        )
        for line in moved:
            typer.echo(f"  {line}", err=True)
    raise typer.Exit(1)


@app.command()
def fold(
    ref: Annotated[str | None, typer.Argument(help="Run id or unique prefix.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Fold every finished run.")] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Also delete the branches of a run that could still resume, and remove what "
            "git holds of a run whose record cannot be read (by its id).",
        ),
    ] = False,
) -> None:
    """Remove a run's worktrees and its losing branches (the winner's branch stays).

    Exits 1 when any run was skipped, so a script never takes a skip for a fold.
    """
    from magi import engine
    from magi.state.store import Store, magi_home

    skipped = 0
    done_all = engine.fold(
        Store(magi_home()), ref, all_runs=all_, environ=os.environ, force=force, cwd=Path.cwd()
    )
    for done in done_all:
        if done.skipped is not None:
            skipped += 1
            typer.echo(f"skip {done.run_id}: {done.skipped}", err=True)
        elif not done.removed:
            typer.echo(f"folded {done.run_id}: nothing left to remove")
        else:
            trees = sum(1 for r in done.removed if r.startswith("/"))
            branches = len(done.removed) - trees
            typer.echo(f"folded {done.run_id}: removed {trees} worktree(s), {branches} branch(es)")
        for line in done.kept:
            typer.echo(f"  kept {line}")
    if skipped:
        raise typer.Exit(1)


@app.command()
def demo(
    what: Annotated[
        str, typer.Argument(help="competition (the default) or council.")
    ] = "competition",
    where: Annotated[
        Path | None, typer.Option("--dir", help="Where to build the scratch repo.")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Label seed for the demo run.")] = 7,
) -> None:
    """A complete competition (or `magi demo council`) offline, with scripted agents."""
    if what == "council":
        from magi.cli.council import demo_council

        demo_council(where)
        return
    if what != "competition":
        raise UsageError(f"magi demo runs competition or council, not {what!r}")
    from magi.cli.progress import TerminalReporter
    from magi.demo import run_demo

    reporter = TerminalReporter(console())
    try:
        record, home, signal_exit = run_demo(
            where, seed=seed, reporter=reporter, python=sys.executable
        )
    finally:
        reporter.close()
    from magi.report import render

    emit(render(record))
    typer.echo(f"\nThe demo's repository and records are under {home}.")
    # `make demo` runs .venv/bin/magi, which a fresh shell does not have on PATH.
    exe = "magi" if shutil.which("magi") else sys.argv[0]
    typer.echo(f"See it again with:  MAGI_HOME={home / 'magi-home'} {exe} show {record.id}")
    code = signal_exit if signal_exit is not None else RUN_EXIT.get(record.status, 1)
    if code:
        raise typer.Exit(code)
