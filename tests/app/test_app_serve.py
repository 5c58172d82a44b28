"""`magi app serve`: the receiver from magi-app.env in one command; its key and webhook
checked with GitHub before it listens; the address GitHub must reach printed."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import sys
from pathlib import Path

import httpx
import pytest
import uvicorn

from app_check_helpers import KEY, PUBLIC, healthy
from magi.cli.app_env import AppKey
from magi.cli.app_serve import start_checks
from magi.errors import UsageError
from magi.testing.github_http import asgi


def _key(key: str = KEY, public: str | None = PUBLIC) -> AppKey:
    return AppKey("1", key, "https://api.github.test", public)


def test_a_key_github_refuses_stops_the_start() -> None:
    from github_helpers import new_pem

    with pytest.raises(UsageError, match="GitHub refused the App's key"):
        asyncio.run(start_checks(_key(new_pem()), httpx.MockTransport(healthy())))


def test_a_webhook_that_points_elsewhere_is_said_before_listening() -> None:
    double = healthy()
    said = asyncio.run(start_checks(_key(), httpx.MockTransport(double)))
    assert not [line for line in said if line.startswith("warning")]
    double.app_side.url = "https://example.invalid/webhook"
    said = asyncio.run(start_checks(_key(), httpx.MockTransport(double)))
    assert any("warning: the App's webhook has no address" in line for line in said)
    assert any(f"set the Webhook URL to {PUBLIC}/webhook" in line for line in said)


def test_the_command_binds_says_what_github_must_reach_and_answers(tmp_path: Path) -> None:
    """As its own process, GitHub the double over real HTTP: /healthz answers 200."""
    double = healthy()
    github = socket.socket()
    github.bind(("127.0.0.1", 0))
    github.listen(8)
    key = tmp_path / "magi-app.pem"
    key.write_text(KEY)
    env = tmp_path / "magi-app.env"
    env.write_text(
        f"GITHUB_APP_ID=1\nGITHUB_APP_SLUG=magi-app\nGITHUB_WEBHOOK_SECRET=s\n"
        f"GITHUB_APP_PRIVATE_KEY_PATH='{key}'\nMAGI_PUBLIC_URL={PUBLIC}\n"
        f"GITHUB_API_URL=http://127.0.0.1:{github.getsockname()[1]}\n"
    )

    async def main() -> tuple[list[str], int]:
        server = uvicorn.Server(
            uvicorn.Config(asgi(double), log_level="warning", access_log=False, lifespan="off")
        )
        serving = asyncio.create_task(server.serve(sockets=[github]))
        proc = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "magi", "app", "serve", "--env-file", str(env)),
            *("--port", "0"),
            stdout=asyncio.subprocess.PIPE,
            env={k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")},
        )
        assert proc.stdout is not None
        said: list[str] = []
        try:
            while not said or "GitHub must reach" not in said[-1]:
                line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
                assert line, f"serve ended: {said}"
                said.append(line.strip())
            here = re.search(r"passed on to (http://127\.0\.0\.1:\d+)/webhook", said[-1])
            assert here, said
            # The socket listens before the line is printed: the request waits in its
            # backlog until uvicorn (its lifespan's GET /app done) accepts it.
            async with httpx.AsyncClient(base_url=here.group(1), timeout=60) as client:
                health = await client.get("/healthz")
            return said, health.status_code
        finally:
            proc.terminate()
            await proc.wait()
            server.should_exit = True
            await serving
            github.close()

    said, status = asyncio.run(main())
    assert "the App magi-app (id 1) takes this key" in said
    assert f"GitHub must reach {PUBLIC}/webhook (MAGI_PUBLIC_URL)" in said[-1]
    assert status == 200
