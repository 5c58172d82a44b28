"""``create_app``: the App's factory, ``uvicorn magi.app:create_app --factory``.

Settings are read from the environment here and nowhere else, validated as a whole before
the server accepts anything. Tests pass ``settings`` and ``ports`` (a ``FakeGitHub``) in.
"""

from __future__ import annotations

import gc
import os
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import datetime

from fastapi import FastAPI

from magi.app import commands, labeled, land_lock, landing, logs, merge, progress
from magi.app.context import AppContext, PortFactory
from magi.app.events import Router
from magi.app.settings import Settings, settings_from_env
from magi.app.webhook import Edge
from magi.core.markers import Seal
from magi.github.models import Repo
from magi.github.port import GitHubPort
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
    """The FastAPI App; raises ``SettingsError`` listing every missing setting."""
    if settings is None:
        settings = settings_from_env(os.environ if environ is None else environ)
    logs.configure()
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
    )
    if clock is not None:
        ctx = replace(ctx, clock=clock)
    if rand is not None:
        ctx = replace(ctx, rand=rand)
    if sleep is not None:
        ctx = replace(ctx, sleep=sleep)
    if same_change is not None:
        ctx = replace(ctx, same_change=same_change)
    edge = Edge(ctx, settings.webhook_secret, ROUTER)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # The App's own login keeps it deaf to its own comments; learn it once if not given.
        if not edge.ctx.app_login and auth is not None:
            edge.ctx = replace(edge.ctx, app_login=await auth.app_login())
        # What start-up built (FastAPI, pydantic, githubkit's schema models) lives as long as
        # the process: frozen out of the collector's sight, a full collection no longer walks
        # it in the middle of a delivery.
        gc.freeze()
        yield
        if auth is not None:
            await auth.aclose()

    app = FastAPI(title="magi", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.router.routes.extend(edge.routes())
    return app
