"""The App's own side of GitHub's HTTP double: its webhook and its installations.

``magi app check`` asks GitHub, with the App's JWT, what a person would look up on the
App's settings pages: the webhook's configuration (``GET /app/hook/config``), its recent
deliveries and what the receiver answered each (``GET /app/hook/deliveries``), and the
installations (``GET /app/installations``); and, with an installation's token, the
repository (``GET /repos/{owner}/{repo}``: private or public, its default branch). Each
answer is GitHub's published example (``github_api/examples-app.json``, from
``@octokit/openapi``'s full description) with ``AppSide``'s values laid over it.

What GitHub keeps and refuses, as these routes keep it:

- the webhook's secret is never answered: ``secret`` is ``"********"`` when one is set
  (https://docs.github.com/en/rest/apps/webhooks#get-a-webhook-configuration-for-an-app);
- the webhook's *Active* box is not in the REST configuration (its schema has ``url``,
  ``content_type``, ``secret``, ``insecure_ssl`` only): an inactive webhook shows as no
  deliveries at all;
- deliveries come newest first, at most ``per_page`` (default 30, at most 100) of them
  (https://docs.github.com/en/rest/apps/webhooks#list-deliveries-for-an-app-webhook);
- all three ``/app`` routes take the App's JWT only (401 otherwise, as ``GET /app``);
- a repository's self-hosted runners are listed only to an installation granted
  ``administration: read`` (403 "Resource not accessible by integration" otherwise).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from magi.github.models import Repo
from magi.testing.github_routes import C, _jwt_refused, _query, over, route

if TYPE_CHECKING:
    from magi.testing.github_http import GitHubHTTP

__all__ = ["AppSide", "delivery", "repo_id"]


def repo_id(full_name: str) -> int:
    """The repository's id, as the double's pull requests name it too."""
    return zlib.crc32(full_name.lower().encode())  # as branch_repo names it


def delivery(
    repo: str,
    status_code: int,
    *,
    event: str = "issues",
    action: str | None = "labeled",
    status: str = "",
    number: int = 1,
) -> dict[str, Any]:
    """One row of ``GET /app/hook/deliveries`` for ``repo`` (``status_code`` 0: GitHub got
    no HTTP answer, ``status`` then says why, e.g. "failed to connect")."""
    return {
        "id": 1000 + number,
        "guid": f"0b989ba4-242f-11e5-81e1-{number:012d}",
        "delivered_at": f"2026-12-06T12:{number % 60:02d}:00Z",
        "redelivery": False,
        "duration": 0.1,
        "status": status
        or ("OK" if 200 <= status_code < 300 else f"Invalid HTTP Response: {status_code}"),
        "status_code": status_code,
        "event": event,
        "action": action,
        "installation_id": 1,
        "repository_id": repo_id(repo),
        "throttled_at": None,
    }


@dataclass
class AppSide:
    """What the App's settings pages hold. ``installations``: account login -> installation
    id (None: one, id 1, for each owner of a repository the App is installed on)."""

    url: str = "https://magi.example.test/webhook"
    content_type: str = "json"
    insecure_ssl: str = "0"
    secret: bool = True
    deliveries: list[dict[str, Any]] = field(default_factory=list)  # newest first
    installations: dict[str, int] | None = None
    public: set[str] = field(default_factory=set)  # repositories that are not private
    events: list[str] | None = None  # what GET /app says it subscribes to (None: the example)
    # the repository's self-hosted runners: (name, "online"/"offline", labels)
    runners: list[tuple[str, str, list[str]]] = field(default_factory=list)


def _side(d: GitHubHTTP) -> AppSide:
    return d.app_side


@route("GET", "/app/hook/config")
async def _hook_config(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    if (refused := _jwt_refused(d, rq)) is not None:
        return refused
    s = _side(d)
    ours = {"url": s.url, "content_type": s.content_type, "insecure_ssl": s.insecure_ssl}
    out = d.shaped("GET", "/app/hook/config", ours)
    if s.secret:
        out["secret"] = "********"  # noqa: S105 - GitHub masks it so, never says it
    else:
        out.pop("secret", None)
    return 200, out


@route("GET", "/app/hook/deliveries")
async def _deliveries(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    if (refused := _jwt_refused(d, rq)) is not None:
        return refused
    per_page = int(_query(rq, "per_page") or 30)
    if not 1 <= per_page <= 100:
        return 422, {"message": "per_page must be between 1 and 100"}
    shape = d.example("GET", "/app/hook/deliveries")
    base = shape[0] if isinstance(shape, list) and shape else {}
    return 200, [{**base, **row} for row in _side(d).deliveries[:per_page]]


@route("GET", "/app/installations")
async def _installations(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    if (refused := _jwt_refused(d, rq)) is not None:
        return refused
    accounts = _side(d).installations
    if accounts is None:
        owners = {name.split("/")[0] for name, w in d.fake.worlds.items() if w.installed}
        accounts = dict.fromkeys(sorted(owners), 1)
    shape = d.example("GET", "/app/installations")
    base = shape[0] if isinstance(shape, list) and shape else {}
    rows = []
    for login, number in accounts.items():
        ours = {"id": number, "account": {"login": login}, "app_slug": "magi-app"}
        rows.append(over(base, ours))
    return 200, rows


@route("GET", C)
async def _repository(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    if repo.full_name not in d.fake.worlds:
        return 404, {"message": "Not Found"}
    w = d.fake.world(repo)
    private = repo.full_name not in _side(d).public
    ours = {
        "id": repo_id(repo.full_name),
        "name": repo.name,
        "full_name": repo.full_name,
        "owner": {"login": repo.owner},
        "private": private,
        "visibility": "private" if private else "public",
        "default_branch": w.default_branch,
    }
    return 200, d.shaped("GET", C, ours)


@route("GET", C + "/actions/runners")
async def _runners(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    """Only with ``administration: read`` granted; otherwise GitHub's 403 to an App token.
    https://docs.github.com/en/rest/actions/self-hosted-runners#list-self-hosted-runners-for-a-repository"""
    granted = d.fake.world(repo).granted or {}
    if granted.get("administration") not in {"read", "write"}:
        return 403, {"message": "Resource not accessible by integration"}
    shape = d.example("GET", C + "/actions/runners")
    base = (shape.get("runners") or [{}])[0] if isinstance(shape, dict) else {}
    rows = []
    for number, (name, status, labels) in enumerate(_side(d).runners, 1):
        ours = {"id": number, "name": name, "status": status, "busy": False}
        ours["labels"] = [{"id": i, "name": n, "type": "custom"} for i, n in enumerate(labels, 1)]
        rows.append({**base, **ours})
    return 200, {"total_count": len(rows), "runners": rows}
