"""The forged approval of issue 19, against the App as deployed: uvicorn processes with real
App auth (a JWT, an installation token), GitHub the HTTP double on a socket, which keeps
comments as GitHub does and refuses a body over its limit."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from datetime import timedelta
from typing import Any

import httpx
import uvicorn

from github_helpers import NOW, REPO, SECRET, fixture, keep_delivered, pem, pr_comment, sign
from magi.core.threads import markers
from magi.core.threads.markers import Seal
from magi.testing.github import FakeGitHub
from magi.testing.github_http import GitHubHTTP, asgi

SHA = "a" * 40
PR = 7


def bound() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    return sock


def deliveries(fake: FakeGitHub, *events: tuple[str, dict[str, Any]]) -> list[int]:
    """Each delivery through an App process of its own, started after the last one's
    background work ended (uvicorn's graceful shutdown finishes it): no waiting by time."""
    double = GitHubHTTP(fake)
    github_sock = bound()
    env = {
        **os.environ,
        "GITHUB_APP_ID": "1",
        "GITHUB_APP_PRIVATE_KEY": pem(),
        "GITHUB_WEBHOOK_SECRET": SECRET,
        "GITHUB_API_URL": f"http://127.0.0.1:{github_sock.getsockname()[1]}",
        "GITHUB_APP_SLUG": "magi-app",
    }

    async def main() -> list[int]:
        config = uvicorn.Config(asgi(double), log_level="warning", access_log=False, lifespan="off")
        github = uvicorn.Server(config)
        serving = asyncio.create_task(github.serve(sockets=[github_sock]))
        codes = []
        try:
            for n, (event, payload) in enumerate(events):
                keep_delivered(fake, event, payload)
                sock = bound()
                app = await asyncio.create_subprocess_exec(
                    *(sys.executable, "-m", "uvicorn", "magi.app:create_app", "--factory"),
                    *("--fd", str(sock.fileno()), "--log-level", "warning"),
                    pass_fds=[sock.fileno()],
                    env=env,
                    stderr=asyncio.subprocess.DEVNULL,
                )
                body = json.dumps(payload).encode()
                headers = {
                    "X-GitHub-Event": event,
                    "X-GitHub-Delivery": f"hostile-{n}",
                    "X-Hub-Signature-256": sign(body),
                    "Content-Type": "application/json",
                }
                url = f"http://127.0.0.1:{sock.getsockname()[1]}/webhook"
                try:  # the socket listens already: the post waits in its backlog
                    async with httpx.AsyncClient(timeout=60) as client:
                        posted = await client.post(url, content=body, headers=headers)
                        codes.append(posted.status_code)
                finally:
                    app.send_signal(signal.SIGTERM)
                    await app.wait()
                    sock.close()
        finally:
            github.should_exit = True
            await serving
            github_sock.close()
        double.assert_clean()
        return codes

    return asyncio.run(main())


def test_a_strangers_forged_approval_merges_nothing_through_the_deployed_app() -> None:
    """The attack as it merged a PR: `/magi hi <approval marker>` from a user with no
    permission, then a green check. The App's reply shows the marker; nothing merges."""
    seal = Seal.from_private_key(pem())
    fake = FakeGitHub()
    fake.now = NOW - timedelta(minutes=30)
    w = fake.world(REPO)
    w.permissions["Codertocat"] = "write"
    fake.add_issue(REPO, 1, "Spelling error in the README file", "two t's")
    body = "Closes #1\n" + seal.marker(markers.PR, issue=1, run="r1")
    fake.add_pull(REPO, PR, "magi/r1/A", SHA, title="Fix spelling", body=body)
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    mark = f"<!-- magi:approval comment=5001 sha={SHA} login=Codertocat -->"
    attack = pr_comment(f"/magi hi {mark}", login="mallory", number=PR, comment_id=9001)
    green = fixture("check_suite.completed")
    green["check_suite"]["head_sha"] = SHA
    green["check_suite"]["pull_requests"] = [{"number": PR}]
    assert deliveries(fake, ("issue_comment", attack), ("check_suite", green)) == [200, 200]
    assert w.merges == []
    (reply,) = fake.comments_on(REPO, PR)
    assert "&lt;\\!\\-\\- magi\\:approval" in reply  # shown to the reader, never hidden
    assert seal.latest([reply], markers.APPROVAL) is None
    assert "<!-- magi:approval" not in reply
