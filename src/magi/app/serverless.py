"""``magi receive``: the App's own handlers, once, on the event a workflow run was started by.

Without a receiver, the workflow's ``receive`` job (on ``issues``, ``issue_comment``,
``workflow_run`` and ``merge_group``) hands its event here, with the App installation token
it minted and the App's key. Which events magi acts on, and how, is decided by the
receiver's code itself (``Edge.accept``: the routes, the bot rule, each route's ``wants``),
and each handler is the App's: the label's claim, the acknowledgement and the dispatch
(``labeled``), every ``/magi`` command (``commands``), the merge gate (``merge``), the
``magi`` check on a merge queue's group (``queue``), landing's reactions to a review or a
push (``landing``). There is one engine; this is another door into it.

What differs is only what a workflow run cannot have: no public address, so a ``/magi stop``
cancels the run rather than parking it (nothing can answer the runner's question), and no
``workflow_job`` deliveries, so the tracking comment shows no per-job progress.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import typer

from magi.app.context import AppContext
from magi.app.events import Delivery
from magi.app.main import ROUTER, _behind_the_door
from magi.app.webhook import IGNORED, Edge
from magi.core.threads.markers import Seal
from magi.errors import ActionError
from magi.github.models import Repo
from magi.github.port import GitHubPort

__all__ = ["receive", "receive_event"]

TOKEN = "MAGI_GITHUB_TOKEN"  # noqa: S105 -- the name of the variable that holds it
MARKER_KEY = "MAGI_MARKER_KEY"  # the App's private key: seals magi's markers
SLUG = "MAGI_APP_SLUG"  # the App's slug: whose comments are magi's


async def receive(ctx: AppContext, event: str, body: bytes, delivery: str) -> list[str]:
    """Run every handler the receiver would run for this delivery; their outcomes."""
    work = Edge(ctx, "", ROUTER).accept(event, body)
    if isinstance(work, str):
        if work in IGNORED:
            return [work]
        raise ActionError(f"the {event} event is not what GitHub sends: {work}")
    _, parsed = work
    return [await route.handler(ctx, Delivery(delivery, event, p)) for route, p in parsed]


def _port_factory(obj: Any, api_url: str, token: str) -> Any:
    """The port maker the command line was invoked with (a test's double), else GitHub's:
    anything with ``ports(api_url, token)``, as ``magi.action.context.ActionContext``."""
    given = getattr(obj, "given", obj)
    ports = getattr(given, "ports", None)
    if callable(ports):
        return lambda: ports(api_url, token)
    from magi.github.githubkit_port import token_port

    return lambda: token_port(api_url, token)


def context(obj: Any, environ: MutableMapping[str, str]) -> AppContext:
    """The App's context for one job, from its step's environment (the key leaves it)."""
    token, slug = environ.get(TOKEN, ""), environ.get(SLUG, "")
    pem = environ.pop(MARKER_KEY, "")
    if not token:
        raise ActionError(f"receive needs the App installation token in {TOKEN} (input token)")
    if not slug:
        raise ActionError(f"receive needs {SLUG}: the App token step's app-slug output")
    if not pem.strip():
        raise ActionError(f"receive needs the App's private key in {MARKER_KEY} (input app-key)")
    try:
        seal = Seal.from_private_key(pem)
    except ValueError as exc:
        raise ActionError(f"{MARKER_KEY}: {exc}") from None
    make = _port_factory(obj, environ.get("GITHUB_API_URL") or "https://api.github.com", token)

    async def ports(installation: int | None, repo: Repo) -> GitHubPort:
        return make()  # type: ignore[no-any-return]

    login = f"{slug}[bot]"
    return AppContext(
        ports=_behind_the_door(ports, seal), app_login=login, seal=seal, serverless=True
    )


def receive_event(obj: Any, event_name: str, event_file: Path) -> None:
    """Do what the App's receiver does for this event; ``magi receive`` (``magi.receive``)."""
    try:
        body = event_file.read_bytes()
    except OSError as exc:
        raise ActionError(f"cannot read the event file {event_file}: {exc}") from None
    app = context(obj, os.environ)
    delivery = f"workflow-run-{os.environ.get('GITHUB_RUN_ID', '?')}"
    outcomes = asyncio.run(receive(app, event_name, body, delivery))
    typer.echo(f"magi on {event_name}: {', '.join(outcomes)}")
