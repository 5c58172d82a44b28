"""At start-up the App asks GitHub again for what it did not finish, and for nothing else."""

from __future__ import annotations

import asyncio
import logging
import socket
from datetime import UTC, datetime, timedelta

import httpx

from github_helpers import API, REPO, pem
from magi.app.redeliver import redeliver_unfinished
from magi.core.threads.redelivery import newest_attempts, verdict
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


def test_only_each_deliverys_newest_attempt_in_the_window_counts() -> None:
    """A failed attempt redelivered since is done; an attempt before the window is not read."""
    failed = delivery(REPO.full_name, 0, number=1)
    again = {**delivery(REPO.full_name, 200, number=2), "guid": failed["guid"]}
    old = {**delivery(REPO.full_name, 0, number=3), "delivered_at": "2026-12-04T12:00:00Z"}
    rows = newest_attempts([again, failed, old], NOW - timedelta(hours=24))
    assert [r["id"] for r in rows] == [again["id"]]


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

    async def main() -> list[int]:
        auth = AppAuth("1", pem(), API, async_transport=httpx.MockTransport(double))
        asked = await redeliver_unfinished(auth, NOW, LOG)
        await asyncio.gather(*side.sending)
        return asked

    asked = asyncio.run(main())
    assert sorted(asked) == sorted(r["id"] for r in wanted.values())
    pages = [q for q in double.requests if q == ("GET", "/app/hook/deliveries")]
    assert len(pages) == 2
    again = [r for r in side.deliveries if r["redelivery"]]
    assert sorted(r["guid"] for r in again) == sorted(r["guid"] for r in wanted.values())
    double.assert_clean()
