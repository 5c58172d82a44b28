"""The ``magi`` app every command registers on, its error handling and its output helpers.

Every MagiError becomes its message on stderr and its own exit code (the exception tree is
the exit-code table); anything else is a bug and keeps its traceback. Command modules
import from here; ``magi.cli`` (the package) composes them, so nothing imports in a circle.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console, RenderableType
from typer.core import TyperGroup

from magi.errors import MagiError

PIPED_WIDTH = 120


def _escape_help(command: Any) -> None:
    """Every help text under ``command`` shown as written: rich markup would take a config
    name in brackets for a style tag and drop it ("Allow a longer task ( task_max_bytes)")."""
    from rich.markup import escape

    if getattr(command, "_magi_escaped", False):
        return
    command._magi_escaped = True
    for name in ("help", "short_help", "epilog"):
        text = getattr(command, name, None)
        if isinstance(text, str):
            setattr(command, name, escape(text))
    for param in getattr(command, "params", []):
        if isinstance(getattr(param, "help", None), str):
            param.help = escape(param.help)
    for sub in getattr(command, "commands", {}).values():
        _escape_help(sub)


class MagiGroup(TyperGroup):
    """The root group: turns MagiError into exit codes wherever the CLI is invoked; help
    texts are plain text (``_escape_help``)."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        _escape_help(self)
        return super().main(*args, **kwargs)

    def invoke(self, ctx: Any) -> Any:
        # Here rather than in main() so that the test runner sees the same exit codes.
        try:
            return super().invoke(ctx)
        except MagiError as exc:
            typer.echo(f"error: {exc.message}", err=True)
            raise typer.Exit(exc.exit_code) from exc


@dataclass(frozen=True)
class Options:
    """Global options, handed to subcommands through ``ctx.obj``.

    ``given`` is what the caller invoked the command line with (``obj=``): a surface's
    injected services, as a test hands the Action its GitHub port (``ActionContext``).
    """

    config: Path | None = None
    given: object = None


app = typer.Typer(
    cls=MagiGroup,
    name="magi",
    no_args_is_help=False,
    add_completion=False,
    rich_markup_mode="rich",
    # Locals can hold an agent's environment (API keys); a bug report must not carry them.
    pretty_exceptions_show_locals=False,
)

ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config", help="Use this config file alone instead of the layered ones.", dir_okay=False
    ),
]


def console() -> Console:
    """A console on the current stdout; rich drops colour by itself when stdout is not a TTY."""
    out = Console(highlight=False)
    if not out.is_terminal and "COLUMNS" not in os.environ:
        # Piped output lands in a pager, a log or grep: wrapping at rich's default 80 would
        # split paths and commands mid-word.
        out.width = PIPED_WIDTH
    return out


def emit(renderable: RenderableType) -> None:
    """Print to stdout; piped, as plain lines without the cell padding rich adds."""
    out = console()
    if out.is_terminal:
        out.print(renderable)
        return
    with out.capture() as captured:
        out.print(renderable)
    typer.echo("\n".join(line.rstrip() for line in captured.get().splitlines()))


def config_path(ctx: typer.Context, local: Path | None) -> Path | None:
    """The ``--config`` given to the subcommand, else the one given before it."""
    if local is not None:
        return local
    obj = ctx.find_object(Options)
    return obj.config if obj is not None else None
