"""Two App processes under uvicorn, one GitHub (the HTTP double on a socket): one run."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys

import httpx
import uvicorn

from github_helpers import REPO, SECRET, labeled, pem, sign
from magi.testing.github import FakeGitHub
from magi.testing.github_http import GitHubHTTP, asgi


def bound() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


def test_the_same_delivery_through_two_app_processes_starts_one_run() -> None:
    """Real processes, real App auth (JWT, installation token), a shared GitHub: one of each."""
    fake = FakeGitHub()
    fake.world(REPO).permissions["Codertocat"] = "write"
    fake.add_issue(REPO, 1, "Spelling error in the README file", "two t's")
    double = GitHubHTTP(fake)
    github_sock = bound()
    api = f"http://127.0.0.1:{github_sock.getsockname()[1]}"
    body = json.dumps(labeled()).encode()
    headers = {
        "X-GitHub-Event": "issues",
        "X-GitHub-Delivery": "same",
        "X-Hub-Signature-256": sign(body),
        "Content-Type": "application/json",
    }
    env = {
        **os.environ,
        "GITHUB_APP_ID": "1",
        "GITHUB_APP_PRIVATE_KEY": pem(),
        "GITHUB_WEBHOOK_SECRET": SECRET,
        "GITHUB_API_URL": api,
        "GITHUB_APP_SLUG": "magi-app",
    }

    async def main() -> list[int]:
        config = uvicorn.Config(asgi(double), log_level="warning", access_log=False, lifespan="off")
        github = uvicorn.Server(config)
        serving = asyncio.create_task(github.serve(sockets=[github_sock]))
        socks = [bound(), bound()]
        apps = [
            await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "uvicorn",
                "magi.app:create_app",
                "--factory",
                "--fd",
                str(s.fileno()),
                "--log-level",
                "warning",
                pass_fds=[s.fileno()],
                env=env,
                stderr=asyncio.subprocess.DEVNULL,
            )
            for s in socks
        ]
        try:
            async with httpx.AsyncClient(timeout=60) as client:
                posts = [
                    client.post(
                        f"http://127.0.0.1:{s.getsockname()[1]}/webhook",
                        content=body,
                        headers=headers,
                    )
                    for s in socks * 5
                ]
                codes = [r.status_code for r in await asyncio.gather(*posts)]
        finally:
            for proc in apps:  # uvicorn's graceful shutdown finishes the background work
                proc.send_signal(signal.SIGTERM)
            await asyncio.gather(*(proc.wait() for proc in apps))
            github.should_exit = True
            await serving
            for s in [*socks, github_sock]:
                s.close()
        return codes

    assert asyncio.run(main()) == [200] * 10
    assert len(fake.world(REPO).dispatches) == 1
    assert len(fake.comments_on(REPO, 1)) == 1
    assert double.tokens_minted >= 1
    double.assert_clean()
