"""App auth: the App's JWT, installation tokens, and one port per installation.

githubkit's ``AppAuthStrategy`` signs the JWT and exchanges it for an installation token,
which it caches in the ``MemCacheStrategy`` given here until a minute before it expires
(tokens live an hour). The cache belongs to this ``AppAuth``, not to the process, so two
Apps in one test never share tokens. githubkit's own retry is off: ``GitHubKitPort`` is the
one retry layer. https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from githubkit import AppAuthStrategy, GitHub
from githubkit.cache import MemCacheStrategy

from magi.github.githubkit_port import GitHubKitPort
from magi.github.models import Repo
from magi.github.port import GitHubError, GitHubPort

MAX_INSTALLATIONS = 256


class AppAuth:
    """Makes a ``GitHubPort`` for the installation a delivery came from."""

    def __init__(
        self,
        app_id: str,
        private_key: str,
        api_url: str = "https://api.github.com",
        *,
        async_transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        timeout: float = 10.0,
    ) -> None:
        self.sleep = sleep
        self.app = GitHub(
            AppAuthStrategy(app_id, private_key),
            base_url=api_url.rstrip("/") + "/",
            timeout=timeout,
            async_transport=async_transport,
            cache_strategy=MemCacheStrategy(),
            http_cache=False,
            auto_retry=False,
        )
        self._app_port = GitHubKitPort(self.app, sleep=sleep)
        self._ports: OrderedDict[int, GitHubKitPort] = OrderedDict()
        self._installations: dict[str, int] = {}

    async def installation_of(self, repo: Repo) -> int:
        """The installation id for ``repo`` (deliveries usually carry it; this is the fallback)."""
        if repo.full_name not in self._installations:
            data = await self.repo_installation(repo)
            if not isinstance(data.get("id"), int):
                raise GitHubError(f"no installation of the App on {repo.full_name}", status=404)
            self._installations[repo.full_name] = data["id"]
        return self._installations[repo.full_name]

    async def port_for(self, installation: int | None, repo: Repo) -> GitHubPort:
        """The port speaking as ``installation`` (looked up from ``repo`` when None)."""
        if installation is None:
            installation = await self.installation_of(repo)
        port = self._ports.get(installation)
        if port is None:
            auth = self.app.auth
            if not isinstance(auth, AppAuthStrategy):  # pragma: no cover - built above
                raise TypeError("the App client lost its App auth")
            gh = self.app.with_auth(auth.as_installation(installation))
            port = GitHubKitPort(gh, sleep=self.sleep)
            self._ports[installation] = port
            if len(self._ports) > MAX_INSTALLATIONS:
                self._ports.popitem(last=False)
        self._ports.move_to_end(installation)
        return port

    async def app_login(self) -> str:
        """The App's bot login, ``<slug>[bot]`` (``GET /app`` with the JWT)."""
        slug = (await self.app_info()).get("slug")
        if not isinstance(slug, str) or not slug:
            raise GitHubError("GET /app did not name the App's slug")
        return f"{slug}[bot]"

    async def app_info(self) -> dict[str, Any]:
        """``GET /app`` with the JWT: the App's id, slug and the permissions it asks for."""
        data: Any = await self._app_port._call(self.app.rest.apps.async_get_authenticated)
        if not isinstance(data, dict):
            raise GitHubError("GET /app answered no App")
        return data

    async def repo_installation(self, repo: Repo) -> dict[str, Any]:
        """``GET /repos/{owner}/{repo}/installation`` with the JWT: the installation there,
        with the permissions it granted and whether it is suspended."""
        rest = self.app.rest.apps
        data: Any = await self._app_port._call(
            rest.async_get_repo_installation, repo.owner, repo.name
        )
        if not isinstance(data, dict):
            raise GitHubError(f"no installation of the App on {repo.full_name}", status=404)
        return data

    async def aclose(self) -> None:
        """Nothing pooled to close: githubkit opens a client per request outside a context."""
