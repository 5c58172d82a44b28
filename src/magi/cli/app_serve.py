"""``magi app serve``: the receiver in one command, from the file ``magi app setup`` wrote.

It reads ``magi-app.env`` (``--env-file``), asks GitHub with the App's key whether the key
is the App's (``GET /app``) and where the App's webhook points (``GET /app/hook/config``),
says what it found, binds where it is told (``--host``, ``--port``), prints the address
GitHub must reach, and serves ``magi.app:create_app`` under uvicorn. A key GitHub refuses
stops it at once (nothing could work); a webhook that points elsewhere, or GitHub not
answering, is said and the receiver starts (it answers 503 until GitHub does, so GitHub
keeps its deliveries). TLS is in front of it: docs/receiver.md.
"""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path
from typing import Annotated, Any

import typer

from magi.cli.app import Options
from magi.cli.app_env import AppKey, app_key, read_env_file
from magi.cli.app_setup import cli
from magi.errors import UsageError

__all__ = ["start_checks"]

DEFAULT_ENV = "magi-app.env"


async def start_checks(key: AppKey, transport: Any = None) -> list[str]:
    """What the receiver says before it listens; a UsageError when GitHub refuses the key."""
    from magi.cli.app_check import app_pages
    from magi.core.person.app_check import hook_findings
    from magi.github.app_reader import AppReader
    from magi.github.auth import AppAuth
    from magi.github.port import GitHubError

    reader = AppReader(AppAuth(key.app_id, key.pem, key.api_url, async_transport=transport))
    try:
        app = await reader.app()
        hook = await reader.hook_config()
    except GitHubError as exc:
        if exc.auth:
            raise UsageError(f"GitHub refused the App's key: {exc.message}") from None
        return [f"warning: GitHub ({key.api_url}) did not answer: {exc.message}; the "
                "receiver answers 503 until it does"]  # fmt: skip
    lines = [f"the App {app.get('slug')} (id {app.get('id')}) takes this key"]
    settings, _ = app_pages(app)
    for f in hook_findings(hook, key.public_url, settings):
        lines.append(f.why if f.fine else f"warning: {f.why}; fix: {f.fix}")
    return lines


def _address(host: str, port: int, public: str | None) -> str:
    here = f"http://{host if ':' not in host else f'[{host}]'}:{port}/webhook"
    if public:
        return (
            f"GitHub must reach {public}/webhook (MAGI_PUBLIC_URL), passed on to {here}; "
            f"runners reach {public}/park/..."
        )
    return (
        f"listening at {here}: GitHub must reach it over https from the internet, through a "
        "proxy with TLS or a tunnel (docs/receiver.md); set MAGI_PUBLIC_URL to that address"
    )


@cli.command("serve")
def serve(
    ctx: typer.Context,
    env_file: Annotated[
        Path | None,
        typer.Option(
            "--env-file",
            help="The receiver's environment (magi app setup wrote it; default ./magi-app.env "
            "when it exists, else the process's environment alone).",
            dir_okay=False,
        ),
    ] = None,
    host: Annotated[str, typer.Option("--host", help="The address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="The port to bind (0: any).", min=0)] = 8080,
) -> None:
    """Run the receiver: check its key and webhook with GitHub, bind, say what GitHub must
    reach, serve."""
    import uvicorn

    if env_file is None and Path(DEFAULT_ENV).is_file():
        env_file = Path(DEFAULT_ENV)
    values = read_env_file(env_file) if env_file is not None else {}
    environ = {**os.environ, **values}
    key = app_key(environ)
    obj = ctx.find_object(Options)
    transport = obj.given if obj is not None and obj.given is not None else None
    for line in asyncio.run(start_checks(key, transport)):
        typer.echo(line)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        raise UsageError(f"cannot bind {host}:{port}: {exc.strerror}") from None
    sock.listen(128)
    os.environ.update(values)  # create_app reads its settings from the environment
    typer.echo(_address(host, sock.getsockname()[1], key.public_url), color=False)
    config = uvicorn.Config(
        "magi.app:create_app", factory=True, log_level="warning", access_log=False,
        proxy_headers=True, forwarded_allow_ips="127.0.0.1",
    )  # fmt: skip
    uvicorn.Server(config).run(sockets=[sock])
