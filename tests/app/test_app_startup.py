"""A receiver that cannot work says why at /healthz (503) instead of dying in a traceback:
a missing setting, a key that is not one, a key GitHub refuses, a GitHub it cannot reach.
A refused token exchange is said once, never retried five times as a "network error"."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import httpx
import pytest

from github_helpers import REPO, SECRET, labeled, new_pem, pem, public_pem, sign
from magi.app import create_app
from magi.github.auth import AppAuth
from magi.github.port import GitHubError
from magi.testing.github import FakeGitHub
from magi.testing.github_http import GitHubHTTP


async def _calls(app: Any, *requests: tuple[str, str, bytes, dict[str, str]]) -> list[Any]:
    """Start the App (its lifespan too), make the requests, stop it."""
    out = []
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://app") as client:
            for method, path, body, headers in requests:
                out.append(await client.request(method, path, content=body, headers=headers))
    return out


def _delivery() -> tuple[str, str, bytes, dict[str, str]]:
    body = json.dumps(labeled()).encode()
    headers = {"X-GitHub-Event": "issues", "X-Hub-Signature-256": sign(body)}
    return "POST", "/webhook", body, headers


HEALTH = ("GET", "/healthz", b"", {})


def test_missing_settings_answer_503_naming_each_one() -> None:
    """The environment names no key: the process stays up and says what is missing."""
    app = create_app(environ={"GITHUB_APP_ID": "1"})
    health, hook = asyncio.run(_calls(app, HEALTH, _delivery()))
    assert health.status_code == 503
    problems = health.json()["problems"]
    assert any("GITHUB_APP_PRIVATE_KEY" in p for p in problems)
    assert any("GITHUB_WEBHOOK_SECRET" in p for p in problems)
    assert hook.status_code == 503


def test_a_key_that_is_not_one_is_named_without_its_bytes() -> None:
    """A PEM header around garbage: the variable is named; nothing of the value is shown."""
    env = {
        "GITHUB_APP_ID": "1",
        "GITHUB_APP_PRIVATE_KEY": (
            "-----BEGIN RSA PRIVATE KEY-----\nZmFrZQ==\n-----END RSA PRIVATE KEY-----"
        ),
        "GITHUB_WEBHOOK_SECRET": SECRET,
    }
    (health,) = asyncio.run(_calls(create_app(environ=env), HEALTH))
    assert health.status_code == 503
    (problem,) = health.json()["problems"]
    assert problem.startswith("GITHUB_APP_PRIVATE_KEY: not a usable private key")
    assert "ZmFrZQ" not in problem


def _app_over(double: GitHubHTTP, key: str, **env: str) -> Any:
    """The App from its environment, its GitHub the double (real JWT, real token exchange)."""
    import magi.github.auth as auth_module

    transport = httpx.MockTransport(double)
    real = auth_module.AppAuth

    def over_double(*a: Any, **kw: Any) -> AppAuth:
        return real(*a, async_transport=transport, **kw)

    environ = {
        "GITHUB_APP_ID": "1",
        "GITHUB_APP_PRIVATE_KEY": key,
        "GITHUB_WEBHOOK_SECRET": SECRET,
        "GITHUB_API_URL": "https://api.github.test",
        **env,
    }
    auth_module.AppAuth = over_double  # type: ignore[misc]
    try:
        return create_app(environ=environ)
    finally:
        auth_module.AppAuth = real  # type: ignore[misc]


def test_a_key_github_refuses_is_said_at_healthz_and_deliveries_wait() -> None:
    """The key is another App's: GET /app is refused at start-up; /healthz names both
    variables; deliveries get 503 (GitHub keeps them to redeliver); nothing is retried."""
    fake = FakeGitHub()
    double = GitHubHTTP(fake, app=("1", public_pem(pem())))
    app = _app_over(double, new_pem())
    health, hook = asyncio.run(_calls(app, HEALTH, _delivery()))
    assert health.status_code == 503
    problem = health.json()["problem"]
    assert "GITHUB_APP_PRIVATE_KEY does not match the App GITHUB_APP_ID names" in problem
    assert hook.status_code == 503
    assert fake.calls == []
    assert double.requests.count(("GET", "/app")) <= 2  # start-up, then the health check


def test_a_refused_key_gets_503_also_when_the_slug_is_given() -> None:
    """GITHUB_APP_SLUG set: the App knows its login, but not a token can be had; the
    delivery still gets 503 (app/README.md), so GitHub keeps it to redeliver."""
    fake = FakeGitHub()
    double = GitHubHTTP(fake, app=("1", public_pem(pem())))
    app = _app_over(double, new_pem(), GITHUB_APP_SLUG="magi-app")
    health, hook = asyncio.run(_calls(app, HEALTH, _delivery()))
    assert health.status_code == 503
    assert hook.status_code == 503
    assert fake.calls == []


def test_the_right_key_is_healthy() -> None:
    """The same double with the App's own key: 200, and the delivery is queued."""
    fake = FakeGitHub()
    fake.world(REPO).permissions["Codertocat"] = "write"
    fake.add_issue(REPO, 1, "Spelling error in the README file", "two t's")
    double = GitHubHTTP(fake, app=("1", public_pem(pem())))
    health, hook = asyncio.run(_calls(_app_over(double, pem()), HEALTH, _delivery()))
    assert health.status_code == 200
    assert hook.status_code == 200


def test_an_unreachable_github_names_the_url() -> None:
    """Nothing listens at GITHUB_API_URL: the URL and the variable, not a traceback."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    env = {
        "GITHUB_APP_ID": "1",
        "GITHUB_APP_PRIVATE_KEY": pem(),
        "GITHUB_WEBHOOK_SECRET": SECRET,
        "GITHUB_API_URL": f"http://127.0.0.1:{port}",
    }

    async def no_sleep(_: float) -> None:
        return None

    import magi.github.auth as auth_module

    real = auth_module.AppAuth
    auth_module.AppAuth = lambda *a, **kw: real(*a, sleep=no_sleep, **kw)  # type: ignore[misc]
    try:
        app = create_app(environ=env)
    finally:
        auth_module.AppAuth = real  # type: ignore[misc]
    (health,) = asyncio.run(_calls(app, HEALTH))
    assert health.status_code == 503
    assert f"GITHUB_API_URL http://127.0.0.1:{port}" in health.json()["problem"]


@pytest.mark.parametrize(("status", "words"), [(401, "does not match"), (404, "not installed")])
def test_a_refused_token_exchange_is_one_request_and_plain_words(status: int, words: str) -> None:
    """githubkit wraps the refusal as a network error; magi does not retry it five times."""
    fake = FakeGitHub()
    double = GitHubHTTP(fake)
    double.inject("POST", r"/app/installations/\d+/access_tokens", status, times=9)

    async def no_sleep(_: float) -> None:
        return None

    auth = AppAuth(
        "1",
        pem(),
        "https://api.github.test",
        async_transport=httpx.MockTransport(double),
        sleep=no_sleep,
    )

    async def go() -> None:
        port = await auth.port_for(5, REPO)
        await port.get_issue(REPO, 1)

    with pytest.raises(GitHubError, match=words) as err:
        asyncio.run(go())
    assert err.value.auth
    assert double.requests.count(("POST", "/app/installations/5/access_tokens")) == 1
