"""A receiver killed with a delivery's work undone: the next one asks GitHub again, and the
work happens. Real uvicorn processes, SIGKILL, GitHub's HTTP double on a socket sending
the deliveries and keeping what was answered, as GitHub does."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from collections.abc import Callable

import pytest
import uvicorn

from github_helpers import REPO, SECRET, labeled, pem
from magi.testing.github import FakeGitHub
from magi.testing.github_app_routes import send
from magi.testing.github_http import GitHubHTTP, asgi

GUID = "72d3162e-cc78-11e3-81ab-4c9367dc0958"
WAIT = 60.0  # the most any condition below is waited for


def bound() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


async def until(done: Callable[[], bool]) -> None:
    """Poll a condition, bounded: what a separate process did shows up in the double."""
    async with asyncio.timeout(WAIT):
        while not done():
            await asyncio.sleep(0.02)


async def receiver(sock: socket.socket, env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "uvicorn",
        "magi.app:create_app",
        "--factory",
        "--fd",
        str(sock.fileno()),
        "--log-level",
        "warning",
        pass_fds=[sock.fileno()],
        env=env,
        stderr=asyncio.subprocess.DEVNULL,
    )


def world() -> FakeGitHub:
    fake = FakeGitHub()
    fake.world(REPO).permissions["Codertocat"] = "write"
    fake.add_issue(REPO, 1, "Spelling error in the README file", "two t's")
    asyncio.run(fake.add_labels(REPO, 1, ["magi"]))  # the label a replay reads back
    return fake


def setup() -> tuple[FakeGitHub, GitHubHTTP, dict[str, str]]:
    fake = world()
    double = GitHubHTTP(fake)
    double.app_side.secret_value = SECRET
    env = {
        **os.environ,
        "GITHUB_APP_ID": "1",
        "GITHUB_APP_PRIVATE_KEY": pem(),
        "GITHUB_WEBHOOK_SECRET": SECRET,
        "GITHUB_APP_SLUG": "magi-app",
    }
    return fake, double, env


@pytest.mark.parametrize("answered", [202, 0], ids=["after-the-202", "before-any-answer"])
def test_a_delivery_killed_before_its_work_is_done_after_a_restart(answered: int) -> None:
    """The label's work is held at its first GitHub read; the receiver answers 202
    "working" (its wait set short) or nothing yet, and is killed (SIGKILL): nothing was
    dispatched. The next receiver, on the same address, asks GitHub at start-up for the
    delivery again, and the run is dispatched, once."""
    fake, double, env = setup()
    if answered == 202:
        env["MAGI_ANSWER_WITHIN"] = "0.2"
    held = double.hold("GET", r"/contents/")
    body = json.dumps(labeled()).encode()

    async def main() -> int:
        api_sock, app_sock = bound(), bound()
        env["GITHUB_API_URL"] = f"http://127.0.0.1:{api_sock.getsockname()[1]}"
        double.app_side.url = f"http://127.0.0.1:{app_sock.getsockname()[1]}/webhook"
        config = uvicorn.Config(asgi(double), log_level="warning", access_log=False, lifespan="off")
        github = uvicorn.Server(config)
        serving = asyncio.create_task(github.serve(sockets=[api_sock]))
        first = await receiver(app_sock, env)
        second = None
        try:
            delivering = asyncio.create_task(send(double, "issues", body, GUID))
            async with asyncio.timeout(WAIT):
                await held.arrived.wait()
                if answered:  # the 202 is in GitHub's record before the kill
                    assert await delivering == 202
            first.send_signal(signal.SIGKILL)
            assert await first.wait() == -signal.SIGKILL
            held.release.set()  # its answer now goes to a dead process
            async with asyncio.timeout(WAIT):
                code = await delivering
            assert fake.world(REPO).dispatches == []
            env.pop("MAGI_ANSWER_WITHIN", None)
            second = await receiver(app_sock, env)  # the same address GitHub delivers to
            await until(lambda: len(double.app_side.deliveries) == 2)
        finally:
            for proc in (first, second):
                if proc is not None and proc.returncode is None:
                    proc.send_signal(signal.SIGTERM)
                    await proc.wait()
            github.should_exit = True
            await serving
            api_sock.close()
            app_sock.close()
        return code

    assert asyncio.run(main()) == answered
    rows = double.app_side.deliveries  # newest first
    assert [(r["guid"], r["status_code"], r["redelivery"]) for r in rows] == [
        (GUID, 200, True),
        (GUID, answered, False),
    ]
    assert len(fake.world(REPO).dispatches) == 1
    assert len(fake.comments_on(REPO, 1)) == 1
    double.assert_clean()
