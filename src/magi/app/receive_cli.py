"""``magi receive``: without a receiver, the App's handlers on a workflow run's event.

Registered under the ``magi.commands`` entry points, which every ``magi`` start loads: this
module stays light, and the App's stack (fastapi, githubkit, cryptography) is imported only
when the command runs (``magi.app.serverless``), so a laptop's ``magi`` never loads it
(tests/project/test_packaging.py); ``magi.app`` loads nothing until asked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["cli"]

cli = typer.Typer(help="Without a receiver: the App's handlers on a workflow run's event.")


@cli.callback(invoke_without_command=True)
def receive_command(
    ctx: typer.Context,
    event_name: Annotated[str, typer.Option("--event-name", help="GITHUB_EVENT_NAME.")],
    event_file: Annotated[Path, typer.Option("--event-file", help="GITHUB_EVENT_PATH.")],
) -> None:
    """Do what the App's receiver does for this event (``magi.app.serverless``)."""
    from magi.app.serverless import receive_event

    receive_event(ctx.find_root().obj, event_name, event_file)
