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
- deliveries come newest first, at most ``per_page`` (default 30, at most 100) of them,
  the next page named by a ``cursor`` in the ``Link`` header's ``rel="next"``
  (https://docs.github.com/en/rest/apps/webhooks#list-deliveries-for-an-app-webhook);
- one delivery (``GET /app/hook/deliveries/{id}``) holds what was sent and what the
  receiver answered (``response.payload``, the body as text); an unknown id is 404;
- GitHub sends a delivery again only when asked (``POST
  /app/hook/deliveries/{id}/attempts``: 202, then a new attempt with the same ``guid``,
  ``redelivery`` true; an unknown id is 404). The double sends it as GitHub would, to
  ``AppSide.url`` signed with ``AppSide.secret_value``, and records what was answered: a
  receiver that answers nothing within ``AppSide.timeout`` seconds is ``status_code`` 0
  (https://docs.github.com/en/rest/apps/webhooks#redeliver-a-delivery-for-an-app-webhook,
  https://docs.github.com/en/webhooks/using-webhooks/handling-failed-webhook-deliveries);
- all three ``/app`` routes take the App's JWT only (401 otherwise, as ``GET /app``);
- a repository's self-hosted runners are listed only to an installation granted
  ``administration: read`` (403 "Resource not accessible by integration" otherwise).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
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
    secret_value: str = ""  # what deliveries are signed with (``send``)
    timeout: float = 10.0  # GitHub's: a receiver slower than this failed the delivery
    sent: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # guid -> event, body
    answers: dict[int, str] = field(default_factory=dict)  # delivery id -> the body answered
    sending: set[asyncio.Task[int]] = field(default_factory=set)  # redeliveries under way


async def send(d: GitHubHTTP, event: str, body: bytes, guid: str, *, again: bool = False) -> int:
    """Deliver ``body`` to the App's webhook as GitHub does, and record the attempt (newest
    first); returns the status code (0: no answer)."""
    side = _side(d)
    side.sent[guid] = (event, body)
    mac = hmac.new(side.secret_value.encode(), body, hashlib.sha256).hexdigest()
    headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": guid,
        "X-Hub-Signature-256": f"sha256={mac}",
        "Content-Type": "application/json",
    }
    try:
        async with httpx.AsyncClient(timeout=side.timeout) as client:
            answer = await client.post(side.url, content=body, headers=headers)
        code, status, text = answer.status_code, "", answer.text
    except httpx.TimeoutException:
        code, status, text = 0, "timed out", ""
    except httpx.TransportError:
        code, status, text = 0, "failed to connect", ""
    number = max((int(r["id"]) for r in side.deliveries), default=1000) + 1
    action = json.loads(body).get("action") if body.startswith(b"{") else None
    row = delivery("-", code, event=event, action=action, status=status, number=number - 1000)
    row |= {"id": number, "guid": guid, "redelivery": again, "delivered_at": _now()}
    side.deliveries.insert(0, row)
    side.answers[number] = text
    return code


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


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
    rows = _side(d).deliveries
    start = int(_query(rq, "cursor") or 0)
    page = [{**base, **row} for row in rows[start : start + per_page]]
    headers = {}
    if start + per_page < len(rows):
        nxt = rq.url.copy_set_param("cursor", str(start + per_page))
        headers["link"] = f'<{nxt}>; rel="next"'
    return httpx.Response(200, json=page, headers=headers)


def _row(d: GitHubHTTP, p: dict[str, str]) -> dict[str, Any] | None:
    wanted = p["delivery_id"]
    return next((r for r in _side(d).deliveries if str(r["id"]) == wanted), None)


@route("GET", "/app/hook/deliveries/{delivery_id}")
async def _delivery(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    if (refused := _jwt_refused(d, rq)) is not None:
        return refused
    row = _row(d, p)
    if row is None:
        return 404, {"message": "Not Found"}
    event, body = _side(d).sent.get(row["guid"], (row["event"], b"{}"))
    sent = {"headers": {"X-GitHub-Event": event}, "payload": json.loads(body)}
    answered: dict[str, Any] = {"headers": {}, "payload": _side(d).answers.get(row["id"])}
    return 200, {**row, "url": _side(d).url, "request": sent, "response": answered}


@route("POST", "/app/hook/deliveries/{delivery_id}/attempts")
async def _redeliver(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    if (refused := _jwt_refused(d, rq)) is not None:
        return refused
    row = _row(d, p)
    if row is None or row["guid"] not in _side(d).sent:
        return 404, {"message": "Not Found"}
    event, body = _side(d).sent[row["guid"]]
    task = asyncio.create_task(send(d, event, body, row["guid"], again=True))
    _side(d).sending.add(task)
    return 202, {}


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
