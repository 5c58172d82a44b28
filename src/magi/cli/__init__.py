"""The ``magi`` command line, composed: the commands, the bare-``magi`` behaviour, ``main``.

The app and its helpers live in ``magi.cli.app``; each command module registers on it when
imported here, and sub-apps of other surfaces arrive through the ``magi.commands``
entry-point group.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer

from magi.cli import (
    app_check,
    app_serve,
    app_setup,
    asking,
    competition,
    council,
    doctor,
    foundation,
    review,
)
from magi.cli.app import ConfigOption, Options, app, config_path, console, emit
from magi.errors import ExitCode, MagiError


@app.callback(invoke_without_command=True)
def root(ctx: typer.Context, config: ConfigOption = None) -> None:
    """A blind multi-agent implementation competition.

    Bare `magi` prints the latest run's report (never a full-screen view).
    """
    ctx.obj = Options(config=config, given=ctx.obj)
    if ctx.invoked_subcommand is not None:
        return
    from magi.cli.council import latest_council
    from magi.cli.foundation import latest_run

    if latest_council():  # the newest record is a council's: it was shown
        return
    run = latest_run()
    if run is None:
        # Rich help prints itself and returns ""; plain help comes back as text.
        text = ctx.get_help()
        if text:
            typer.echo(text)
        return
    from magi.report import render

    emit(render(run))


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``magi`` script."""
    try:
        app(args=argv, prog_name="magi")
    except MagiError as exc:  # raised outside a command (while building the app)
        print(f"error: {exc.message}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(ExitCode.INTERRUPTED)


def _command_groups() -> None:
    """Sub-apps other surfaces register under the ``magi.commands`` entry-point group
    (``magi action`` is one): the CLI never imports a sibling surface itself."""
    from importlib.metadata import entry_points

    for ep in entry_points(group="magi.commands"):
        app.add_typer(ep.load(), name=ep.name)


_command_groups()

__all__ = [
    "app",
    "app_check",
    "app_serve",
    "app_setup",
    "asking",
    "competition",
    "config_path",
    "console",
    "council",
    "doctor",
    "emit",
    "foundation",
    "main",
    "review",
]
