"""``magi app check OWNER/REPO``: why a label there did nothing, asked of GitHub as the App.

With the App's key (the receiver's ``magi-app.env``), from anywhere: the App and what it
asks for, its webhook's address, the installation on the repository, the repository's
workflow on its default branch against this magi's (inputs, pin), and what the receiver
answered GitHub's latest deliveries. Every problem is printed with its fix; the command
exits 1 when there is one. The decisions are ``magi.core.person.app_check``'s and
``magi.config.workflow.workflow_problems``'.
"""

from __future__ import annotations

import asyncio
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

import typer

from magi.cli.app import Options, emit
from magi.cli.app_env import AppKey, app_key, environment
from magi.cli.app_setup import cli, read_manifest
from magi.cli.app_steps import app_settings_url
from magi.core.person.app_check import (
    Finding,
    app_findings,
    delivery_findings,
    hook_findings,
    install_findings,
    runner_findings,
    without_receiver,
)
from magi.core.person.public import PUBLIC_LABEL
from magi.errors import UsageError
from magi.github.models import Repo

__all__ = ["app_pages", "check_repo"]

EnvFile = Annotated[
    Path | None,
    typer.Option(
        "--env-file",
        help="The receiver's environment file (magi app setup's magi-app.env).",
        dir_okay=False,
    ),
]


def _manifest() -> dict[str, Any]:
    return read_manifest(files("magi").joinpath("templates/app.yml").read_text(encoding="utf-8"))


def app_pages(app: dict[str, Any]) -> tuple[str, str]:
    """The App's settings page and its install page, from what ``GET /app`` said."""
    html = str(app.get("html_url") or "https://github.com/apps/magi").rstrip("/")
    parts = urlsplit(html)
    owner = app.get("owner") or {}
    org = owner.get("login") if owner.get("type") == "Organization" else None
    web = f"{parts.scheme}://{parts.netloc}"
    slug = str(app.get("slug") or "")
    return app_settings_url(web, org, slug), f"{web}/apps/{slug}/installations/new"


async def check_repo(key: AppKey, repo: Repo, transport: Any = None) -> list[Finding]:
    """Every finding, in the order a delivery meets them."""
    from magi.github.app_reader import AppReader
    from magi.github.auth import AppAuth
    from magi.github.port import GitHubError

    auth = AppAuth(key.app_id, key.pem, key.api_url, async_transport=transport)
    reader = AppReader(auth)
    try:
        app = await reader.app()
    except GitHubError as exc:
        fix = "check GITHUB_APP_ID and the key file against the App's settings page"
        return [Finding(f"GitHub did not take the App's key: {exc.message}", fix)]
    settings, install = app_pages(app)
    wanted = _manifest()
    out = app_findings(app, wanted["default_permissions"], wanted["default_events"], settings)
    hook = await reader.hook_config()
    at = len(out)
    out += hook_findings(hook, key.public_url, settings)
    webhook = out[at:]
    try:
        inst: dict[str, Any] | None = await reader.installation(repo)
    except GitHubError as exc:
        if exc.status != 404:
            raise
        inst = None
    accounts = [str((i.get("account") or {}).get("login")) for i in await reader.installations()]
    out += install_findings(repo.full_name, inst, accounts, app.get("permissions") or {}, install)
    repo_id = None
    if inst is not None and isinstance(inst.get("id"), int):
        granted = inst.get("permissions") or {}
        found, repo_id, on_triggers = await _repository(reader, auth, inst["id"], repo, granted)
        out += found
        if on_triggers:  # no receiver: no webhook is needed, nor any delivery to it
            out[at : at + len(webhook)] = without_receiver(hook, settings)
            return out
    return out + delivery_findings(await reader.deliveries(), repo.full_name, repo_id)


async def _repository(
    reader: Any, auth: Any, inst: int, repo: Repo, granted: dict[str, Any]
) -> tuple[list[Finding], int | None, bool]:
    """The repository's visibility and its workflow on the default branch (and whether it
    runs on its own triggers, without a receiver)."""
    from magi.config.source import installed_source
    from magi.config.workflow import serverless, workflow_problems
    from magi.errors import ConfigError
    from magi.github.state import repo_config

    data = await reader.repository(inst, repo)
    branch = str(data.get("default_branch") or "main")
    out: list[Finding] = []
    if data.get("private") is False:
        out.append(Finding(f"{repo.full_name} is public: {PUBLIC_LABEL}", warn=True))
    try:
        config = await repo_config(await auth.port_for(inst, repo), repo, branch)
    except ConfigError as exc:
        fix = f"fix the config on {branch}; the App refuses every label until then"
        return [*out, Finding(f"the config on {branch}: {exc.message}", fix)], data.get("id"), False
    name = config.github.workflow
    text = await reader.file(inst, repo, f".github/workflows/{name}", branch)
    if text is None:
        out.append(Finding(
            f".github/workflows/{name} is not on {branch}: GitHub has nothing to dispatch",
            f"run `magi init --github` in the repository and commit the workflow on {branch}",
        ))  # fmt: skip
    else:
        source = installed_source()
        pin = source.pin if source else None
        problems = workflow_problems(text, name, pin, config.github.label)
        for severity, message in problems:
            out.append(Finding(message, warn=severity != "error"))
        if not problems:
            out.append(Finding(f".github/workflows/{name} on {branch} is this magi's", fine=True))
    out += await _runners(reader, inst, repo, config, granted)
    label = config.github.label
    out.append(
        Finding(f"the label that starts a run is `{label}` ([github] label on {branch})", fine=True)
    )
    found_id = data.get("id") if isinstance(data.get("id"), int) else None
    return out, found_id, text is not None and serverless(text)


async def _runners(
    reader: Any, inst: int, repo: Repo, config: Any, granted: dict[str, Any]
) -> list[Finding]:
    """The runners, when the installation lets the App list them (administration: read)."""
    from magi.core.seats.runners import first_stage

    if granted.get("administration") not in {"read", "write"}:
        why = (
            "the runners' labels are not checked: listing them needs administration: read, "
            "which magi's App does not ask for (`magi doctor --runner` checks a runner)"
        )
        return [Finding(why, note=True)]
    return runner_findings(await reader.runners(inst, repo), first_stage(config))


def render(repo: str, findings: list[Finding]) -> str:
    lines = [f"magi app check {repo}"]
    for f in findings:
        tag = "ok" if f.fine else "note" if f.note else "warn" if f.warn else "PROBLEM"
        lines.append(f"  {tag:<8}{f.why}")
        if f.fix and not f.fine:
            lines.append(f"  {'':<8}fix: {f.fix}")
    bad = [f for f in findings if not (f.fine or f.warn or f.note)]
    lines.append(f"{len(bad)} problem(s)" if bad else "nothing stops a label here")
    return "\n".join(lines)


@cli.command("check")
def check(
    ctx: typer.Context,
    repo: Annotated[
        str, typer.Argument(help="The repository a label did nothing on (OWNER/REPO).")
    ],
    env_file: EnvFile = None,
    public_url: Annotated[
        str | None,
        typer.Option("--public-url", help="Where the receiver answers (default MAGI_PUBLIC_URL)."),
    ] = None,
) -> None:
    """Why a label did nothing: the App, its webhook, the installation, the workflow, and
    what the receiver answered GitHub's latest deliveries, each problem with its fix."""
    from magi.github.port import GitHubError

    try:
        target = Repo.parse(repo)
    except ValueError:
        raise UsageError(f"{repo!r} is not OWNER/REPO") from None
    key = app_key(environment(env_file))
    if public_url:
        key = AppKey(key.app_id, key.pem, key.api_url, public_url.rstrip("/"))
    obj = ctx.find_object(Options)
    transport = obj.given if obj is not None and obj.given is not None else None
    try:
        findings = asyncio.run(check_repo(key, target, transport))
    except GitHubError as exc:
        raise UsageError(f"GitHub ({key.api_url}) answered: {exc.message}") from None
    emit(render(repo, findings))
    if any(not (f.fine or f.warn or f.note) for f in findings):
        raise typer.Exit(1)
