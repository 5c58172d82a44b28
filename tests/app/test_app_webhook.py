"""The webhook edge: signatures, sizes, malformed bodies, routing, bots, health."""

from __future__ import annotations

import asyncio
import io
import json
import logging

import pytest

from github_helpers import REPO, SECRET, deliver, fixture, labeled, make_app, sign, world
from magi.app.logs import JsonFormatter
from magi.app.webhook import MAX_BODY, signature_ok
from magi.testing.github import FakeGitHub


def test_signature_test_vector() -> None:
    """GitHub's documented vector verifies; the same digest without the prefix does not."""
    good = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert signature_ok(SECRET, b"Hello, World!", good)
    assert not signature_ok(SECRET, b"Hello, World!", good.removeprefix("sha256="))
    assert not signature_ok(SECRET, b"Hello, World!", "sha1=" + "0" * 40)
    assert not signature_ok(SECRET, b"Hello, World?", good)


@pytest.mark.parametrize(
    "signature",
    [
        "",
        "sha256=" + "0" * 64,
        "sha1=2fd4e1c67a2d28fced849ee1bb76e7391b93eb12",
        "garbage",
        "sha256=" + "\u00e9" * 64,  # the right length, not ASCII: was a TypeError, a 500
        "sha256=" + "0" * 63 + "\u00ff",
        "sha256=" + "g" * 64,
    ],
)
def test_forged_or_unsigned_is_401_and_nothing_happens(signature: str) -> None:
    """A missing or wrong signature is 401 and no GitHub call is made."""
    fake = world(FakeGitHub())
    sent = signature.encode("latin-1")  # as a client sends header bytes
    r = asyncio.run(deliver(make_app(fake), "issues", labeled(), signature=sent))
    assert r.status_code == 401
    assert fake.calls == []


def test_a_body_signed_with_another_secret_is_401() -> None:
    """The HMAC must be over this App's secret."""
    fake = world(FakeGitHub())
    body = json.dumps(labeled()).encode()
    r = asyncio.run(deliver(make_app(fake), "issues", body, signature=sign(body, "other")))
    assert r.status_code == 401
    assert fake.calls == []


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b'{"action": "labeled", "issue": ', "not JSON"),
        (b"\xff\xfe not json", "not JSON"),
        (b"[1, 2, 3]", "not a JSON object"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deep"),
        (json.dumps({"action": "labeled", "sender": {"login": "x"}}).encode(), "repository"),
    ],
    ids=["truncated", "binary", "array", "deeply-nested", "wrong-shape"],
)
def test_malformed_signed_bodies_are_400_with_a_reason(body: bytes, reason: str) -> None:
    """Signed but unusable bodies get a 400 saying why, and no GitHub call."""
    fake = world(FakeGitHub())
    r = asyncio.run(deliver(make_app(fake), "issues", body))
    assert r.status_code == 400
    assert reason in r.json()["error"]
    assert fake.calls == []


def test_a_body_over_25_mb_is_413_before_the_signature() -> None:
    """Too large is refused from its size alone."""
    fake = world(FakeGitHub())
    body = b'{"a": "' + b"x" * (MAX_BODY + 1) + b'"}'
    r = asyncio.run(deliver(make_app(fake), "issues", body, signature="sha256=" + "0" * 64))
    assert r.status_code == 413
    assert fake.calls == []


def test_unknown_events_and_actions_are_acknowledged_and_ignored() -> None:
    """ping, fork and issues.opened are 2xx and touch nothing."""
    fake = world(FakeGitHub())
    app = make_app(fake)
    for event, payload in [
        ("ping", fixture("ping")),
        ("fork", {"forkee": {}}),
        ("issues", {**labeled(), "action": "opened"}),
    ]:
        r = asyncio.run(deliver(app, event, payload))
        assert r.status_code == 200
        assert r.json()["status"] == "ignored"
    assert fake.calls == []


def test_a_missing_event_header_is_400() -> None:
    """Without X-GitHub-Event nothing can be routed."""
    fake = world(FakeGitHub())
    r = asyncio.run(deliver(make_app(fake), "", labeled()))
    assert r.status_code == 400


def test_bot_senders_are_ignored_except_check_events() -> None:
    """A bot's label is ignored; a bot's check_suite still wakes the gate."""
    fake = world(FakeGitHub())
    app = make_app(fake)
    p = labeled(sender="dependabot[bot]")
    p["sender"]["type"] = "Bot"
    r = asyncio.run(deliver(app, "issues", p))
    assert r.json()["status"] == "ignored-bot"
    assert fake.calls == []
    suite = fixture("check_suite.completed")
    suite["sender"].update({"login": "github-actions[bot]", "type": "Bot"})
    suite["check_suite"]["head_branch"] = "magi/r1/A"  # may be magi's: the payload cannot say
    r = asyncio.run(deliver(app, "check_suite", suite))
    assert r.json()["status"] == "done"
    assert fake.named("list_pulls")


def test_the_apps_own_comments_are_ignored() -> None:
    """The App never acts on its own comments (it would loop)."""
    fake = world(FakeGitHub())
    p = fixture("issue_comment.created")
    p["comment"]["body"] = "/magi status"
    p["sender"].update({"login": "magi-app[bot]", "type": "Bot"})
    r = asyncio.run(deliver(make_app(fake), "issue_comment", p))
    assert r.json()["status"] == "ignored-bot"
    assert fake.calls == []


def test_healthz() -> None:
    """GET /healthz answers ok."""
    import httpx

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=make_app(FakeGitHub()))
        async with httpx.AsyncClient(transport=transport, base_url="http://app") as c:
            return await c.get("/healthz")

    assert asyncio.run(go()).json() == {"status": "ok"}


def test_a_handler_failure_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    """A GitHub failure after the acknowledgement is logged with the delivery id."""
    from magi.github.port import GitHubError

    fake = world(FakeGitHub())
    fake.fail("get_content", GitHubError("boom", status=502), times=1)
    app = make_app(fake)
    log = logging.getLogger("magi.app")
    log.addHandler(caplog.handler)
    try:
        r = asyncio.run(deliver(app, "issues", labeled(), delivery="abc-123"))
    finally:
        log.removeHandler(caplog.handler)
    assert r.status_code == 200
    assert fake.world(REPO).dispatches == []
    failed = [x for x in caplog.records if getattr(x, "outcome", None) == "failed"]
    assert [getattr(x, "delivery", None) for x in failed] == ["abc-123"]


def test_log_lines_are_json_and_carry_no_secret_or_body() -> None:
    """The formatter writes only named fields: never the secret or the payload."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    log = logging.getLogger("magi.app")
    log.addHandler(handler)
    try:
        asyncio.run(deliver(make_app(world(FakeGitHub())), "issues", labeled(), delivery="d-9"))
    finally:
        log.removeHandler(handler)
    lines = [json.loads(x) for x in stream.getvalue().splitlines()]
    assert {"delivery", "handled"} <= {x["msg"] for x in lines}
    assert all(x.get("delivery") == "d-9" for x in lines if x["msg"] == "delivery")
    text = stream.getvalue()
    assert SECRET not in text
    assert "Spelling error" not in text
    assert "accidently" not in text


def test_start_up_freezes_what_it_built_out_of_the_collectors_sight() -> None:
    """After the lifespan's start-up, the long-lived objects are frozen (gc.freeze)."""
    import gc

    gc.unfreeze()
    app = make_app(FakeGitHub())

    async def go() -> int:
        async with app.router.lifespan_context(app):
            return gc.get_freeze_count()

    try:
        assert gc.get_freeze_count() == 0
        assert asyncio.run(go()) > 0
    finally:
        gc.unfreeze()
