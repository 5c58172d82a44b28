"""``create_app``: the App's factory, ``uvicorn magi.app:create_app --factory``.

Settings are read from the environment here and nowhere else, validated as a whole before
the server accepts anything. Tests pass ``settings`` and ``ports`` (a ``FakeGitHub``) in.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import datetime

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route as Route_

from magi.app import commands, labeled, land_lock, landing, logs, merge, park, progress
from magi.app.context import AppContext, PortFactory
from magi.app.events import Router
from magi.app.redeliver import redeliver_unfinished
from magi.app.settings import Settings, settings_from_env
from magi.app.webhook import Edge
from magi.core.threads.markers import Seal
from magi.errors import SettingsError
from magi.github.models import Repo
from magi.github.port import GitHubError, GitHubPort
from magi.github.sealed import sealed

ROUTER = Router.compose(
    labeled.router,
    merge.router,
    commands.router,
    landing.router,
    progress.router,
    land_lock.router,
)


def _behind_the_door(ports: PortFactory, seal: Seal) -> PortFactory:
    """Every port the handlers get writes through ``magi.github.sealed``."""

    async def factory(installation: int | None, repo: Repo) -> GitHubPort:
        return sealed(await ports(installation, repo), seal)

    return factory


def create_app(
    settings: Settings | None = None,
    *,
    ports: PortFactory | None = None,
    app_login: str | None = None,
    environ: Mapping[str, str] | None = None,
    clock: Callable[[], datetime] | None = None,
    rand: random.Random | None = None,
    sleep: Callable[[float], Awaitable[None]] | None = None,
    same_change: Callable[[str, str], bool] | None = None,
) -> FastAPI:
    """The FastAPI App.

    Settings read from the environment that are missing or wrong give an App that answers
    every request 503 with the problems (each logged on one line): a deployment that
    cannot work says why at /healthz instead of dying in a traceback. ``settings`` given
    (tests) raise ``SettingsError`` instead."""
    logs.configure()
    if settings is None:
        try:
            settings = settings_from_env(os.environ if environ is None else environ)
        except SettingsError as exc:
            return _unhealthy(exc.problems)
    auth = None
    if ports is None:
        from magi.github.auth import AppAuth  # githubkit only where the real GitHub is used

        auth = AppAuth(settings.app_id, settings.private_key, settings.api_url)
        ports = auth.port_for
    seal = Seal.from_private_key(settings.private_key)
    ctx = AppContext(
        ports=_behind_the_door(ports, seal),
        app_login=app_login or settings.app_slug or "",
        seal=seal,
        public_url=settings.public_url,
    )
    if clock is not None:
        ctx = replace(ctx, clock=clock)
    if rand is not None:
        ctx = replace(ctx, rand=rand)
    if sleep is not None:
        ctx = replace(ctx, sleep=sleep)
    if same_change is not None:
        ctx = replace(ctx, same_change=same_change)

    async def learn() -> str | None:
        """The App's own login from GitHub (``GET /app``): None once known, else why not."""
        if auth is None:
            return None
        try:
            login = await auth.app_login()
        except GitHubError as exc:
            # With GITHUB_APP_SLUG the login is known: GET /app only checked the credentials.
            hint = "" if settings.app_slug else "; set GITHUB_APP_SLUG to start without it"
            problem = (
                exc.message
                if exc.auth
                else f"GITHUB_API_URL {settings.api_url}: {exc.message} (GET /app{hint})"
            )
            logging.getLogger("magi.app").error(problem)
            return problem
        if not edge.ctx.app_login:
            edge.ctx = replace(edge.ctx, app_login=login)
        return None

    edge = Edge(
        ctx, settings.webhook_secret, ROUTER, recover=learn, answer_within=settings.answer_within
    )

    @asynccontextmanager
    async def lifespan(served: FastAPI) -> AsyncIterator[None]:
        # The App's own login keeps it deaf to its own comments; learn it once if not given,
        # and check that GitHub takes the App's credentials (a JWT signed with its key).
        if not edge.ctx.app_login or auth is not None:
            edge.problem = await learn()
        asking = None
        if auth is not None and edge.problem is None and settings.redeliver:
            # What the receiver before this one left unfinished, asked of GitHub again. The
            # socket listens before this runs (``magi app serve``, ``uvicorn --fd``), so a
            # redelivery waits in its backlog until the App serves.
            log = logging.getLogger("magi.app")
            asking = asyncio.create_task(
                redeliver_unfinished(auth, edge.ctx.clock(), log, edge.replays)
            )
        served.state.sweep = asking  # None: this replica does not ask (``MAGI_REDELIVER=0``)
        # What start-up built (FastAPI, pydantic, githubkit's schema models) lives as long as
        # the process: frozen out of the collector's sight, a full collection no longer walks
        # it in the middle of a delivery.
        gc.freeze()
        yield
        if asking is not None and not asking.done():
            asking.cancel()
        if auth is not None:
            await auth.aclose()

    app = FastAPI(title="magi", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.router.routes.extend(edge.routes())
    app.router.routes.append(park.route(lambda: edge.ctx))
    app.state.edge = edge
    return app


def _unhealthy(problems: list[str]) -> FastAPI:
    """An App that cannot start: every request is a 503 naming what to fix."""
    log = logging.getLogger("magi.app")
    for problem in problems:
        log.error(f"cannot start: {problem}")

    async def answer(request: Request) -> JSONResponse:
        return JSONResponse({"status": "unhealthy", "problems": problems}, status_code=503)

    app = FastAPI(title="magi", docs_url=None, redoc_url=None, openapi_url=None)
    app.router.routes.extend(
        [
            Route_("/healthz", answer, methods=["GET"]),
            Route_("/webhook", answer, methods=["POST"]),
        ]
    )
    return app
