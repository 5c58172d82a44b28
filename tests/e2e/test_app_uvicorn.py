"""The App served by uvicorn on loopback: signatures, size, the 10 s deadline, concurrency."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI

from github_helpers import REPO, labeled, make_app, sign, world
from magi.app.webhook import MAX_BODY
from magi.github.models import Repo
from magi.github.port import GitHubPort
from magi.testing.github import FakeGitHub


@asynccontextmanager
async def serve(*apps: FastAPI) -> AsyncIterator[list[str]]:
    """Serve each app on its own loopback socket; on exit, shut down and await their work.

    The sockets are bound and listening before the servers start, so no test polls for
    readiness; uvicorn's shutdown waits for background tasks, so state is final after.
    """
    servers, tasks, urls = [], [], []
    for app in apps:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
        server = uvicorn.Server(config)
        servers.append(server)
        tasks.append(asyncio.create_task(server.serve(sockets=[sock])))
        urls.append(f"http://127.0.0.1:{sock.getsockname()[1]}")
    try:
        yield urls
    finally:
        for server in servers:
            server.should_exit = True
        await asyncio.gather(*tasks)


def headers(body: bytes, **extra: str) -> dict[str, str]:
    return {
        "X-GitHub-Event": "issues",
        "X-GitHub-Delivery": "d",
        "X-Hub-Signature-256": sign(body),
        "Content-Type": "application/json",
        **extra,
    }


def run(main: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(main())


def test_signed_and_unsigned_over_http() -> None:
    """Over a real socket: unsigned 401 with no call, signed 200 once the run started."""
    fake = world(FakeGitHub())
    body = json.dumps(labeled()).encode()

    async def main() -> tuple[int, int]:
        async with serve(make_app(fake)) as (url,), httpx.AsyncClient(base_url=url) as c:
            bad = await c.post("/webhook", content=body, headers={"X-GitHub-Event": "issues"})
            calls_after_bad = len(fake.calls)
            good = await c.post("/webhook", content=body, headers=headers(body))
            assert calls_after_bad == 0
            return bad.status_code, good.status_code

    assert run(main) == (401, 200)
    assert len(fake.world(REPO).dispatches) == 1


def test_oversized_bodies_are_refused_with_and_without_a_length() -> None:
    """26 MB with Content-Length, and streamed chunked without one: 413 both times."""
    fake = world(FakeGitHub())
    big = b"x" * (MAX_BODY + 1)

    async def chunks() -> AsyncIterator[bytes]:
        for i in range(0, len(big), 1 << 20):
            yield big[i : i + (1 << 20)]

    async def main() -> tuple[int, int]:
        async with (
            serve(make_app(fake)) as (url,),
            httpx.AsyncClient(base_url=url, timeout=60) as c,
        ):
            sized = await c.post("/webhook", content=big, headers=headers(b""))
            streamed = await c.post("/webhook", content=chunks(), headers=headers(b""))
            return sized.status_code, streamed.status_code

    assert run(main) == (413, 413)
    assert fake.calls == []


def test_the_answer_waits_for_github_no_longer_than_its_bound() -> None:
    """GitHub work is held until after the answer arrives: past ``answer_within`` the
    delivery is answered 202 "working", and the work goes on after it."""
    fake = world(FakeGitHub())
    body = json.dumps(labeled()).encode()
    release = asyncio.Event()

    async def held(installation: int | None, repo: Repo) -> GitHubPort:
        await release.wait()
        return fake

    async def main() -> int:
        from github_helpers import SETTINGS
        from magi.app import create_app

        app = create_app(replace(SETTINGS, answer_within=0.1), ports=held)
        async with serve(app) as (url,), httpx.AsyncClient(base_url=url) as c:
            r = await c.post("/webhook", content=body, headers=headers(body))
            assert fake.calls == []  # nothing reached GitHub before the answer
            release.set()
            return r.status_code, r.json()["status"]

    assert run(main) == (202, "working")
    assert len(fake.world(REPO).dispatches) == 1


def test_fifty_concurrent_deliveries_through_two_servers_start_one_run() -> None:
    """Two App instances on two sockets share GitHub: one dispatch, one acknowledgement."""
    fake = world(FakeGitHub())
    body = json.dumps(labeled()).encode()

    async def main() -> list[int]:
        async with serve(make_app(fake), make_app(fake)) as urls, httpx.AsyncClient() as c:
            posts = [
                c.post(f"{urls[i % 2]}/webhook", content=body, headers=headers(body))
                for i in range(50)
            ]
            return [r.status_code for r in await asyncio.gather(*posts)]

    assert run(main) == [200] * 50
    assert len(fake.world(REPO).dispatches) == 1
    assert len(fake.comments_on(REPO, 1)) == 1
