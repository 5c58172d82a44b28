"""``magi app setup``: register the magi App on GitHub in one command (the manifest flow).

A local page (127.0.0.1 only) holds one button: a form that posts the App's manifest
(``magi/templates/app.yml`` as JSON, HTML-escaped into the form, so an apostrophe in the
description no longer cuts it) to GitHub's new-App page, for your account or ``--org``.
GitHub creates the App and redirects back to the page with a one-time ``code`` and the
``state`` the form carried; the page exchanges the code (``POST
/app-manifests/{code}/conversions``, no credential needed) and writes what comes back to a
file only its owner may read: the receiver's environment (``GITHUB_APP_ID``,
``GITHUB_APP_SLUG``, ``GITHUB_WEBHOOK_SECRET``, ``GITHUB_APP_PRIVATE_KEY_PATH``,
``GITHUB_API_URL``) and the two
values the workflow's secrets take (``MAGI_APP_CLIENT_ID``, the key file for
``MAGI_APP_PRIVATE_KEY``). Then it says what to do next (``magi.cli.app_steps``) and the
command ends.
https://docs.github.com/en/apps/sharing-github-apps/registering-a-github-app-from-a-manifest
"""

from __future__ import annotations

import asyncio
import html
import json
import os
import re
import secrets
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote, urlsplit

import typer

from magi.cli.app import app
from magi.cli.app_steps import next_steps
from magi.core.person.app_check import PLACEHOLDER_HOOK
from magi.core.person.park import public_url_problem

__all__ = [
    "Setup",
    "app_name",
    "cli",
    "install_page",
    "manifest",
    "open_in_browser",
    "read_manifest",
]

cli = typer.Typer(
    help="The magi GitHub App: register it (setup), serve it, check why a label did nothing.",
    no_args_is_help=True,
)
app.add_typer(cli, name="app")


def read_manifest(text: str) -> dict[str, Any]:
    """app.yml's flat YAML (scalars, one level of mappings, lists of scalars) as a dict."""
    out: dict[str, Any] = {}
    section = ""
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line.strip():
            continue
        if not line.startswith(" "):
            key, _, value = line.partition(":")
            section = key.strip()
            out[section] = _scalar(value.strip()) if value.strip() else None
            continue
        item = line.strip()
        if item.startswith("- "):
            current = out.get(section)
            out[section] = [*(current if isinstance(current, list) else []), _scalar(item[2:])]
        else:
            key, _, value = item.partition(":")
            current = out.get(section)
            out[section] = {**(current if isinstance(current, dict) else {})}
            out[section][key.strip()] = _scalar(value.strip())
    return out


def _scalar(value: str) -> Any:
    return {"true": True, "false": False}.get(value, value)


# GitHub's longest App name.
# https://docs.github.com/en/apps/creating-github-apps/registering-a-github-app/registering-a-github-app
_NAME_MAX = 34


def app_name(owner: str | None) -> str | None:
    """The name the form proposes for an App of ``owner``'s: ``magi-OWNER`` (App names are
    unique across GitHub, and ``magi`` is taken), None when no owner is known."""
    return f"magi-{owner}"[:_NAME_MAX].rstrip("-") if owner else None


def manifest(public_url: str | None, redirect_url: str, name: str | None = None) -> dict[str, Any]:
    """The App's manifest: app.yml, with this receiver's address and this page's redirect
    (and ``name`` for app.yml's, when given).

    Without ``--public-url`` the webhook is registered inactive (GitHub needs an address
    it can reach); set it in the App's settings once the receiver is deployed."""
    data = read_manifest(files("magi").joinpath("templates/app.yml").read_text(encoding="utf-8"))
    data["redirect_url"] = redirect_url
    if name:
        data["name"] = name
    if public_url:
        base = public_url.rstrip("/")
        data["url"] = base
        data["hook_attributes"] = {"url": f"{base}/webhook", "active": True}
    else:
        data["hook_attributes"] = {"url": PLACEHOLDER_HOOK, "active": False}
    return data


def new_app_url(github_url: str, org: str | None, state: str) -> str:
    base = github_url.rstrip("/")
    where = f"/organizations/{quote(org)}/settings/apps/new" if org else "/settings/apps/new"
    return f"{base}{where}?state={quote(state)}"


def page(action: str, data: dict[str, Any]) -> str:
    """The page that posts the manifest to GitHub as it opens (a button without scripts);
    the manifest is an attribute value, escaped whole."""
    value = html.escape(json.dumps(data), quote=True)
    return (
        "<!doctype html><meta charset=utf-8><title>magi: register the GitHub App</title>"
        "<h1>Register the magi GitHub App</h1>"
        "<p>GitHub will show the App's name, permissions and events before it creates it.</p>"
        f'<form action="{html.escape(action, quote=True)}" method="post">'
        f'<input type="hidden" name="manifest" value="{value}">'
        '<button type="submit" id="create">Create the App on GitHub</button></form>'
        # Opening the page is the step: it goes on to GitHub by itself (the button stays,
        # for a browser without scripts). GitHub's own page is where the App is confirmed.
        '<script>document.getElementById("create").form.submit()</script>'
    )


@dataclass
class Setup:
    """One registration: the state it expects back, where it writes, what it learned."""

    out: Path
    api_url: str
    github_url: str = "https://github.com"
    org: str | None = None
    public_url: str | None = None
    state: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    done: asyncio.Event = field(default_factory=asyncio.Event)
    transport: Any = None  # tests: the GitHub double
    said: str = ""
    repo: str | None = None  # --repo: set the workflow's secrets there with gh
    installs: str = ""  # the App's installation page on GitHub, once GitHub made it

    def app(self, redirect_url: str) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import HTMLResponse, RedirectResponse
        from starlette.routing import Route

        # Only its own address: a web page that rebinds its name to 127.0.0.1 (DNS
        # rebinding) reaches this port with its own name in Host, and must not read the
        # form's one-time state nor finish the flow with an App of its own.
        own = urlsplit(redirect_url).netloc

        def elsewhere(request: Request) -> HTMLResponse | None:
            if request.headers.get("host", "") == own:
                return None
            return HTMLResponse(f"<p>This page answers only at {html.escape(own)}.</p>", 421)

        async def start(request: Request) -> HTMLResponse:
            if (refused := elsewhere(request)) is not None:
                return refused
            action = new_app_url(self.github_url, self.org, self.state)
            owner = self.org or (self.repo or "").partition("/")[0]
            data = manifest(self.public_url, redirect_url, app_name(owner))
            return HTMLResponse(page(action, data))

        async def back(request: Request) -> HTMLResponse | RedirectResponse:
            if (refused := elsewhere(request)) is not None:
                return refused
            code, state = request.query_params.get("code", ""), request.query_params.get("state")
            if not code or not secrets.compare_digest(state or "", self.state):
                return HTMLResponse("<p>This is not the answer to this page's form.</p>", 400)
            try:
                text = await self.exchange(code)
            except (RuntimeError, OSError) as exc:
                return HTMLResponse(f"<p>{html.escape(str(exc))}</p>", 502)
            self.said = text
            self.done.set()
            # The next step is GitHub's installation page: the browser goes on to it (the
            # terminal holds the rest of the steps), so installing is its one click.
            if self.installs:
                return RedirectResponse(self.installs, 303)
            return HTMLResponse(f"<pre>{html.escape(text)}</pre>")

        return Starlette(routes=[Route("/", start), Route("/done", back)])

    async def exchange(self, code: str) -> str:
        """The conversion, then the credentials file; the words for what to do next."""
        import httpx

        url = f"{self.api_url.rstrip('/')}/app-manifests/{quote(code)}/conversions"
        from magi.github.port import API_VERSION

        headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": API_VERSION}
        async with httpx.AsyncClient(transport=self.transport, timeout=30) as client:
            answer = await client.post(url, headers=headers)
        if answer.status_code != 201:
            raise RuntimeError(
                f"GitHub answered {answer.status_code} to the conversion (the code lives one "
                "hour and works once): run `magi app setup` again"
            )
        got = answer.json()
        said = self.write(got)
        # Only a page of the GitHub this setup was pointed at: the redirect never leaves it.
        self.installs = install_page(self.github_url, got)
        return said

    def write(self, got: dict[str, Any]) -> str:
        key = self.out.with_suffix(".pem")
        for path in (self.out, key):
            if path.exists():
                raise RuntimeError(f"{path} exists: magi does not overwrite credentials")
        self.out.parent.mkdir(parents=True, exist_ok=True)
        _private(key, str(got["pem"]))
        # Sourced by a shell (`set -a; . file`): every value quoted as the shell reads it
        # back (a key path with a space, or anything GitHub answered, stays one word and is
        # never run); a plain value stays bare, as docker's --env-file wants it.
        q = shlex.quote
        lines = [
            "# The magi App's credentials (magi app setup). Keep this file to yourself.",
            f"GITHUB_APP_ID={q(str(got['id']))}",
            f"GITHUB_APP_SLUG={q(str(got['slug']))}",
            f"GITHUB_WEBHOOK_SECRET={q(str(got['webhook_secret']))}",
            f"GITHUB_APP_PRIVATE_KEY_PATH={q(str(key))}",
            "# the workflow's secrets: MAGI_APP_CLIENT_ID, and MAGI_APP_PRIVATE_KEY = "
            + " ".join(str(key).splitlines()),
            f"MAGI_APP_CLIENT_ID={q(str(got['client_id']))}",
        ]
        if self.public_url:  # runners ask it whether a `/magi stop` parks their run
            lines.append(f"MAGI_PUBLIC_URL={q(self.public_url.rstrip('/'))}")
        lines.append(f"GITHUB_API_URL={q(self.api_url.rstrip('/'))}")
        _private(self.out, "\n".join(lines) + "\n")
        secrets_said = None
        if self.repo:
            from magi.cli.app_secrets import set_secrets

            values = {
                "MAGI_APP_CLIENT_ID": str(got["client_id"]),
                "MAGI_APP_PRIVATE_KEY": str(got["pem"]),
            }
            why = set_secrets(self.repo, values)
            secrets_said = (self.repo, why)
        return next_steps(
            got, self.out, key, public_url=self.public_url, org=self.org,
            github_url=self.github_url, secrets=secrets_said,
        )  # fmt: skip


def install_page(github_url: str, got: dict[str, Any]) -> str:
    """The App's installation page for its owner's account (``target_id``: GitHub skips
    asking which account), "" when GitHub's answer names no page of ``github_url``: the
    browser is never sent off the GitHub setup was pointed at."""
    page_ = str(got.get("html_url") or "").rstrip("/")
    if not page_.startswith(github_url.rstrip("/") + "/apps/"):
        return ""
    owner = got.get("owner")
    target = owner.get("id") if isinstance(owner, dict) else None
    if isinstance(target, int) and not isinstance(target, bool):
        return f"{page_}/installations/new/permissions?target_id={target}"
    return f"{page_}/installations/new"


def open_in_browser(
    url: str,
    environ: Mapping[str, str] = os.environ,
    tty: bool | None = None,
    opener: Callable[[str], bool] | None = None,
) -> bool:
    """Open ``url`` in the person's browser when one is at hand: a terminal (not a pipe)
    on macOS, Windows or a desktop session (``DISPLAY``, ``WAYLAND_DISPLAY``); over ssh
    or in a script nothing is opened and the address printed is the step."""
    import sys
    import webbrowser

    at_terminal = sys.stdin.isatty() and sys.stdout.isatty() if tty is None else tty
    desktop = sys.platform in ("darwin", "win32") or any(
        environ.get(k) for k in ("DISPLAY", "WAYLAND_DISPLAY")
    )
    if not at_terminal or not desktop:
        return False
    try:
        return bool((opener or webbrowser.open)(url))
    except webbrowser.Error:
        return False


def _private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


@cli.command()
def setup(
    org: Annotated[
        str | None, typer.Option("--org", help="Register it for an organization.")
    ] = None,
    public_url: Annotated[
        str | None,
        typer.Option("--public-url", help="Where the receiver will answer (https://...)."),
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", help="Where to write the credentials (and the .pem).")
    ] = Path("magi-app.env"),
    repo: Annotated[
        str | None,
        typer.Option(
            "--repo",
            help="OWNER/REPO: also set the workflow's two secrets there, with the GitHub CLI "
            "(gh, logged in as you).",
        ),
    ] = None,
    port: Annotated[int, typer.Option("--port", help="The local page's port (0: any).")] = 0,
    browser: Annotated[
        bool,
        typer.Option(
            "--browser/--no-browser",
            help="Open the local page in your browser (at a terminal with a desktop).",
        ),
    ] = True,
    github_url: Annotated[
        str,
        typer.Option(
            "--github-url", help="GitHub's web address (GitHub Enterprise Server: https://HOST)."
        ),
    ] = "https://github.com",
    api_url: Annotated[
        str,
        typer.Option(
            "--api-url", help="GitHub's API (GitHub Enterprise Server: https://HOST/api/v3)."
        ),
    ] = "https://api.github.com",
) -> None:
    """Register the magi App on GitHub through a local page, and write its credentials."""
    import socket

    import uvicorn

    if public_url is not None and (problem := public_url_problem(public_url.rstrip("/"))):
        raise typer.BadParameter(problem, param_hint="--public-url")
    target = out.resolve()
    sock = socket.socket()
    sock.bind(("127.0.0.1", port))
    sock.listen(8)
    here = f"http://127.0.0.1:{sock.getsockname()[1]}"
    if repo is not None and not re.fullmatch(r"[A-Za-z0-9-]+/[A-Za-z0-9._-]+", repo):
        raise typer.BadParameter(f"not OWNER/REPO: {repo!r}", param_hint="--repo")
    job = Setup(target, api_url, github_url, org, public_url, repo=repo)
    server = uvicorn.Server(
        uvicorn.Config(job.app(f"{here}/done"), log_level="warning", access_log=False)
    )

    async def serve() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        await job.done.wait()
        server.should_exit = True
        await task

    opened = browser and open_in_browser(f"{here}/")
    typer.echo(
        f"open {here}/ in a browser: it goes on to GitHub, where you create the App "
        f"({'opened in yours; ' if opened else ''}Ctrl-C to give up)"
    )
    asyncio.run(serve())
    typer.echo(job.said)
