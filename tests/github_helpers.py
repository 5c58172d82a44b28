"""Shared helpers for the App's tests: real fixtures, signing, an App over a FakeGitHub."""

from __future__ import annotations

import asyncio
import copy
import hashlib
import hmac
import itertools
import json
import random
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import httpx
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi import FastAPI

from magi.app import Settings, create_app
from magi.core.threads.markers import Seal
from magi.github.auth import AppAuth
from magi.github.models import Repo
from magi.github.port import GitHubPort
from magi.testing.github import FakeGitHub
from magi.testing.github_http import GitHubHTTP

FIXTURES = Path(__file__).parent / "fixtures" / "github"
SECRET = "It's a Secret to Everybody"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----"
SETTINGS = Settings(app_id="1", private_key=PEM, webhook_secret=SECRET, app_slug="magi-app")
SEAL = Seal.from_private_key(PEM)  # the App's and the publishing jobs' marker key
REPO = Repo(owner="Codertocat", name="Hello-World")
NOW = datetime(2026, 1, 1, 12, tzinfo=UTC)
_ids = itertools.count(1)


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return copy.deepcopy(data)


def sign(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def labeled(
    label: str = "magi", *, sender: str = "Codertocat", action: str = "labeled"
) -> dict[str, Any]:
    p = fixture("issues.labeled" if action == "labeled" else "issues.unlabeled")
    p["label"]["name"] = label
    p["sender"]["login"] = sender
    p["repository"]["default_branch"] = "main"
    return p


def pr_comment(
    body: str,
    *,
    login: str = "Codertocat",
    number: int = 7,
    action: str = "created",
    user_type: str = "User",
    comment_id: int = 5001,
    created_at: str = "2026-01-01T11:59:00Z",
) -> dict[str, Any]:
    p = fixture("issue_comment.created.pull_request")
    p["action"] = action
    p["repository"]["full_name"] = REPO.full_name
    p["repository"]["default_branch"] = "main"
    p["issue"]["number"] = number
    p["comment"].update({"body": body, "id": comment_id, "created_at": created_at})
    p["comment"]["user"].update({"login": login, "type": user_type})
    p["sender"].update({"login": login, "type": user_type})
    return p


def issue_comment(
    body: str, *, login: str = "Codertocat", number: int = 1, comment_id: int | None = None
) -> dict[str, Any]:
    """A comment on issue ``number``; each call is a new comment unless ``comment_id`` is given."""
    p = fixture("issue_comment.created")
    p["repository"]["default_branch"] = "main"
    p["issue"]["number"] = number
    p["comment"].update({"body": body, "id": comment_id or 6000 + next(_ids)})
    p["comment"]["user"]["login"] = login
    p["sender"]["login"] = login
    return p


def world(fake: FakeGitHub, *, writer: str = "Codertocat") -> FakeGitHub:
    w = fake.world(REPO)
    w.permissions[writer] = "write"
    fake.add_issue(
        REPO,
        1,
        "Spelling error in the README file",
        "It looks like you accidently spelled 'commit' with two 't's.",
    )
    return fake


async def no_sleep(seconds: float) -> None:
    """The App's sleep in tests: waiting is never how a test synchronises."""


def make_app(fake: FakeGitHub, **kw: Any) -> FastAPI:
    async def ports(installation: int | None, repo: Repo) -> GitHubPort:
        return fake

    kw.setdefault("clock", lambda: NOW)
    kw.setdefault("rand", random.Random(7))
    kw.setdefault("sleep", no_sleep)
    app = create_app(kw.pop("settings", SETTINGS), ports=ports, **kw)
    app.state.fake = fake  # deliver() keeps a delivered comment in it, as GitHub would have
    return app


def keep_delivered(fake: FakeGitHub, event: str, payload: dict[str, Any]) -> None:
    """What GitHub holds when it sends ``payload``: the comment it is about (created,
    edited or deleted). The App reads comments back; a fake without them would lie."""
    if event != "issue_comment" or not isinstance(payload.get("comment"), dict):
        return
    c, number = payload["comment"], int(payload["issue"]["number"])
    repo = str((payload.get("repository") or {}).get("full_name") or REPO.full_name)
    action = payload.get("action")
    if action == "deleted":
        fake.drop_comment(repo, int(c["id"]))
        return
    created = c.get("created_at")
    fake.keep_comment(
        repo,
        number,
        comment_id=int(c["id"]),
        body=str(c.get("body") or ""),
        login=str(c["user"]["login"]),
        user_type=str(c["user"].get("type") or "User"),
        user_id=int(c["user"].get("id") or 0),
        created_at=datetime.fromisoformat(created) if created else None,
        edited=action == "edited",
    )


async def deliver(
    app: FastAPI,
    event: str,
    payload: dict[str, Any] | bytes,
    *,
    signature: str | bytes | None = None,
    delivery: str | None = None,
) -> httpx.Response:
    """POST one signed delivery; returns once its background work has run too."""
    fake = getattr(app.state, "fake", None)
    if isinstance(payload, dict) and isinstance(fake, FakeGitHub) and signature is None:
        keep_delivered(fake, event, payload)
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or f"d-{next(_ids)}",
        "X-Hub-Signature-256": signature if signature is not None else sign(body),
        "Content-Type": "application/json",
    }
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://app") as client:
        return await client.post("/webhook", content=body, headers=headers)


def store_record(
    fake: FakeGitHub, text: str, run_id: str, *, files: dict[str, str] | None = None
) -> str:
    """Publish ``text`` as ``run.json`` in ``refs/magi/runs/<run_id>`` (on its last commit)."""
    ref = f"magi/runs/{run_id}"
    parent = fake.world(REPO).refs.get(ref)
    sha = fake.commit_files(
        REPO, {"run.json": text, "published.json": "{}\n", **(files or {})}, parent=parent
    )
    fake.world(REPO).refs[ref] = sha
    return sha


API = "https://api.github.test"


T = TypeVar("T")


def new_pem() -> str:
    """A fresh RSA private key, PEM (another App's key, when a test needs a wrong one)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()


@cache
def pem() -> str:
    """The App's private key, one per test process."""
    return new_pem()


def public_pem(private_pem: str) -> str:
    """The public half of ``private_pem``, as GitHub keeps it to check the App's JWTs."""
    key = serialization.load_pem_private_key(private_pem.encode(), password=None)
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


class Sleeps:
    """An injected sleep that records how long the retry layer asked to wait."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def setup() -> tuple[FakeGitHub, GitHubHTTP, AppAuth, Sleeps]:
    fake = FakeGitHub()
    fake.add_issue(REPO, 1, "title", "body")
    double = GitHubHTTP(fake)
    sleeps = Sleeps()
    auth = AppAuth("1", pem(), API, async_transport=httpx.MockTransport(double), sleep=sleeps)
    return fake, double, auth, sleeps


def go(auth: AppAuth, use: Callable[[GitHubPort], Awaitable[T]]) -> T:
    async def main() -> T:
        return await use(await auth.port_for(1, REPO))

    return asyncio.run(main())
