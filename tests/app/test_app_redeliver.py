"""At start-up the App asks GitHub again for what it did not finish, and for nothing else."""

from __future__ import annotations

import asyncio
import logging
import socket
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from github_helpers import API, REPO, SECRET, pem, public_pem
from magi.app import create_app
from magi.app.redeliver import redeliver_unfinished
from magi.core.threads.redelivery import to_replay, verdict
from magi.github.auth import AppAuth
from magi.testing.github import FakeGitHub
from magi.testing.github_app_routes import delivery
from magi.testing.github_http import GitHubHTTP

NOW = datetime(2026, 12, 6, 13, 0, tzinfo=UTC)
LOG = logging.getLogger("magi.app")


def test_what_each_answer_means_at_start_up() -> None:
    """No answer and 5xx: again; 202: ask what it said; other 2xx done, 4xx refused."""
    assert [verdict(c) for c in (0, 500, 503, 202, 200, 204, 400, 401, 413)] == [
        "again",
        "again",
        "again",
        "ask",
        "done",
        "done",
        "done",
        "done",
        "done",
    ]


def _again(row: dict[str, object], code: int, at: str, number: int) -> dict[str, object]:
    """A redelivery of ``row``: a row of its own, same guid, ``redelivery: true``."""
    attempt = delivery(REPO.full_name, code, number=number)
    return {**attempt, "guid": row["guid"], "redelivery": True, "delivered_at": at}


SINCE = NOW - timedelta(hours=24)


def test_only_each_deliverys_newest_attempt_in_the_window_counts() -> None:
    """A failed attempt redelivered since is answered by its redelivery (done); a delivery
    first sent before the window is not read."""
    failed = delivery(REPO.full_name, 0, number=1)
    again = _again(failed, 200, "2026-12-06T12:30:00Z", 2)
    old = {**delivery(REPO.full_name, 0, number=3), "delivered_at": "2026-12-04T12:00:00Z"}
    rows = to_replay([again, failed, old], SINCE)
    assert [r["id"] for r in rows] == [again["id"]]


def test_the_window_runs_from_a_deliverys_first_attempt_not_its_newest() -> None:
    """Work that always outlives the wait is answered 202 "working" at every attempt: first
    sent 60 hours ago and redelivered an hour ago, it is not replayed again; nor is one
    whose first attempt is older than the rows read (only its redelivery was listed)."""
    first = {**delivery(REPO.full_name, 202, number=1), "delivered_at": "2026-12-04T01:00:00Z"}
    again = _again(first, 202, "2026-12-06T12:00:00Z", 2)
    unseen = _again(delivery(REPO.full_name, 0, number=3), 0, "2026-12-06T12:10:00Z", 4)
    assert to_replay([unseen, again, first], SINCE) == []
    assert to_replay([again, first], NOW - timedelta(hours=72)) == [again]


def test_a_delivery_is_redelivered_twice_at_most() -> None:
    """Its first attempt and two redeliveries all unanswered: no third is asked, whoever
    asked for the first two (a restart, a replica, a person in the settings)."""
    first = delivery(REPO.full_name, 0, number=1)
    once = _again(first, 0, "2026-12-06T12:20:00Z", 2)
    twice = _again(first, 503, "2026-12-06T12:40:00Z", 3)
    assert to_replay([once, first], SINCE) == [once]
    assert to_replay([twice, once, first], SINCE) == []


def test_deliveries_are_replayed_in_the_order_they_first_happened() -> None:
    """Label, then unlabel, both while the receiver was down (GitHub lists newest first):
    asked again label first; a delivery redelivered since keeps its first attempt's place."""
    label = delivery(REPO.full_name, 0, number=10)
    unlabel = delivery(REPO.full_name, 0, action="unlabeled", number=11)
    retried = _again(label, 0, "2026-12-06T12:50:00Z", 12)
    assert to_replay([unlabel, label], SINCE) == [label, unlabel]
    assert to_replay([retried, unlabel, label], SINCE) == [retried, unlabel]


def closed_port() -> str:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}/webhook"


def test_start_up_asks_again_for_the_unfinished_and_pages_back_to_the_window() -> None:
    """Of the last day's deliveries (two pages; a third, older, is never read): the one
    never answered, the 503, and the 202 that said "working" are asked again; a 202 an
    older receiver answered "queued", the 200s, a 400 and any older than the window are
    not."""
    double = GitHubHTTP(FakeGitHub())
    side = double.app_side
    side.url = closed_port()
    rows = [delivery(REPO.full_name, 200, number=n) for n in range(200, 350)]
    wanted = {
        0: delivery(REPO.full_name, 0, number=1, status="timed out"),
        503: delivery(REPO.full_name, 503, number=2),
        202: delivery(REPO.full_name, 202, number=3),
    }
    legacy = delivery(REPO.full_name, 202, number=4)
    refused = delivery(REPO.full_name, 400, number=5)
    old = {**delivery(REPO.full_name, 0, number=6), "delivered_at": "2026-12-05T12:00:00Z"}
    older = [
        {**delivery(REPO.full_name, 0, number=n), "delivered_at": "2026-12-05T11:00:00Z"}
        for n in range(400, 500)
    ]  # a third page, all before the window: never read
    side.deliveries = [*rows[:100], *wanted.values(), legacy, refused, *rows[100:], old, *older]
    side.answers[wanted[202]["id"]] = '{"status":"working"}'
    side.answers[legacy["id"]] = '{"status":"queued"}'
    for row in side.deliveries:
        side.sent[row["guid"]] = ("issues", b'{"action": "labeled"}')

    replays: set[str] = set()

    async def main() -> list[int]:
        auth = AppAuth("1", pem(), API, async_transport=httpx.MockTransport(double))
        asked = await redeliver_unfinished(auth, NOW, LOG, replays)
        await asyncio.gather(*side.sending)
        return asked

    asked = asyncio.run(main())
    assert asked == [r["id"] for r in wanted.values()]  # oldest first
    assert replays == {r["guid"] for r in wanted.values()}  # the handlers know them old
    pages = [q for q in double.requests if q == ("GET", "/app/hook/deliveries")]
    assert len(pages) == 2
    again = [r for r in side.deliveries if r["redelivery"]]
    assert sorted(r["guid"] for r in again) == sorted(r["guid"] for r in wanted.values())
    double.assert_clean()


def _started(monkeypatch: pytest.MonkeyPatch, double: GitHubHTTP, **env: str) -> list[int] | None:
    """Start the App from its environment over ``double``; what its start-up asked again
    (None: it did not look)."""
    import magi.github.auth as auth_module

    transport = httpx.MockTransport(double)
    monkeypatch.setattr(
        auth_module, "AppAuth", lambda *a, **kw: AppAuth(*a, async_transport=transport, **kw)
    )
    environ = {
        "GITHUB_APP_ID": "1",
        "GITHUB_APP_PRIVATE_KEY": pem(),
        "GITHUB_WEBHOOK_SECRET": SECRET,
        "GITHUB_API_URL": API,
        "GITHUB_APP_SLUG": "magi-app",
        **env,
    }
    app = create_app(environ=environ)

    async def main() -> list[int] | None:
        async with app.router.lifespan_context(app):
            sweep = app.state.sweep
            asked = None if sweep is None else await sweep
            await asyncio.gather(*double.app_side.sending)  # GitHub's sends, to nobody
            return asked

    return asyncio.run(main())


def test_only_the_replicas_left_on_ask_github_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replicas started together would each ask for the same deliveries: with
    ``MAGI_REDELIVER=0`` a replica never reads them; the one left on (the default) asks."""
    double = GitHubHTTP(FakeGitHub(), app=("1", public_pem(pem())))
    double.app_side.url = closed_port()
    failed = delivery(REPO.full_name, 0, number=1)
    double.app_side.deliveries = [failed]
    double.app_side.sent[failed["guid"]] = ("issues", b'{"action": "labeled"}')
    assert _started(monkeypatch, double, MAGI_REDELIVER="0") is None
    assert ("GET", "/app/hook/deliveries") not in double.requests
    assert _started(monkeypatch, double) == [failed["id"]]
