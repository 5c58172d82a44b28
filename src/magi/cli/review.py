"""The winner's-road commands: ``review`` (a branch), ``fix`` (findings by id), ``stats``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer

from magi.cli.app import app, config_path, console
from magi.cli.competition import _finish


@app.command()
def review(
    ctx: typer.Context,
    branch: Annotated[
        str | None, typer.Argument(help="Branch to review (default: the current one).")
    ] = None,
    base: Annotated[str | None, typer.Option("--base", help="Branch to review against.")] = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="Use this config file alone.")
    ] = None,
) -> None:
    """Review, e2e, fix, gate and merge an existing branch, without a competition."""
    from magi import engine
    from magi.cli.progress import TerminalReporter
    from magi.engine.review import review_branch
    from magi.git.repo import Git
    from magi.state.store import Store, magi_home

    reporter = TerminalReporter(console())
    try:
        cfg = engine.preflight(Path.cwd(), config_path(ctx, config), os.environ, reporter)
        outcome = review_branch(
            branch=branch,
            base=base,
            config=cfg,
            git=Git.discover(Path.cwd()),
            store=Store(magi_home()),
            environ=os.environ,
            reporter=reporter,
        )
    finally:
        reporter.close()
    _finish(outcome.run, outcome.signal_exit)


@app.command()
def fix(
    ref: Annotated[str, typer.Argument(help="Run id or unique prefix.")],
    ids: Annotated[list[str], typer.Argument(help="Finding ids, e.g. R1-2-1.")],
) -> None:
    """Hand recorded findings to the fixer seat; recorded apart from the review rounds."""
    from magi.cli.progress import TerminalReporter
    from magi.engine.review import operator_fix
    from magi.state.store import Store, magi_home

    reporter = TerminalReporter(console())
    try:
        run, done = operator_fix(
            Store(magi_home()), ref, ids, environ=os.environ, reporter=reporter
        )
    finally:
        reporter.close()
    rep = done.report
    typer.echo(f"run {run.id}: {rep.seat} answered {rep.status}")
    typer.echo(f"  adopted: {', '.join(rep.adopted) or 'none'}")
    for r in rep.rejected:
        typer.echo(f"  rejected {r.id}: {r.reason}")
    moved = f"new tree at {(rep.head_after or '')[:12]}" if rep.progressed else "no new tree"
    typer.echo(f"  {moved} (measured with git)")
    if rep.status != "ok":
        raise typer.Exit(1)


@app.command()
def stats(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable figures.")] = False,
    as_markdown: Annotated[
        bool, typer.Option("--markdown", help="The figures as GitHub markdown (`/magi stats`).")
    ] = False,
    settle_days: Annotated[
        int,
        typer.Option(
            "--settle-days",
            min=0,
            help="Days a merged winner must have stayed on its base to count as staying merged.",
        ),
    ] = 7,
) -> None:
    """Relative figures over every stored run that was tallied; each says how many runs it
    rests on, and whether winners stayed merged (read from each repository's base)."""
    from magi.core.figures import stats as figures
    from magi.errors import MagiError
    from magi.report.view import revealed
    from magi.state.store import Store, magi_home

    store = Store(magi_home())
    runs = []
    for run_id in store.list_ids():
        try:
            runs.append(store.load_run(run_id))
        except MagiError:
            continue  # `magi list` reports unreadable records; stats count what can be read
    # The figures name agents: a run not tallied yet must not say who sits in it.
    shown = [r for r in runs if revealed(r)]
    from datetime import UTC, datetime

    from magi.engine.afterlife import read_fates

    s = figures.compute(shown, read_fates(shown, now=datetime.now(UTC), settle_days=settle_days))
    s.hidden = len(runs) - len(shown)
    if as_json:
        typer.echo(json.dumps(figures.as_json(s), indent=2, sort_keys=True))
    elif as_markdown:
        typer.echo(figures.markdown(s), nl=False)
    else:
        typer.echo(figures.render(s), nl=False)
