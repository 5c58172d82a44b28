"""What GitHub holds about the App, read with its own key: ``magi app check``'s questions.

With the App's JWT (``AppAuth``): the App (``GET /app``: its permissions and events), its
webhook's configuration (``GET /app/hook/config``), its recent deliveries and what the
receiver answered (``GET /app/hook/deliveries``), its installations (``GET
/app/installations``) and the one on a repository (``GET /repos/{owner}/{repo}/installation``).
With that installation's token: the repository (``GET /repos/{owner}/{repo}``) and a file
on its default branch. Every answer is GitHub's JSON, as is; ``GitHubError`` otherwise.
https://docs.github.com/en/rest/apps/webhooks
"""

from __future__ import annotations

from typing import Any

from magi.github.auth import AppAuth
from magi.github.models import Repo
from magi.github.port import GitHubError

__all__ = ["AppReader"]

DELIVERIES = 100  # GitHub's most per page; the newest come first


class AppReader:
    """The App's side of GitHub, asked as the App."""

    def __init__(self, auth: AppAuth) -> None:
        self.auth = auth

    async def _jwt(self, fn: Any, *a: Any, **kw: Any) -> Any:
        return await self.auth._app_port._call(fn, *a, **kw)

    async def app(self) -> dict[str, Any]:
        return await self.auth.app_info()

    async def hook_config(self) -> dict[str, Any]:
        data = await self._jwt(self.auth.app.rest.apps.async_get_webhook_config_for_app)
        return data if isinstance(data, dict) else {}

    async def deliveries(self) -> list[dict[str, Any]]:
        rest = self.auth.app.rest.apps
        data = await self._jwt(rest.async_list_webhook_deliveries, per_page=DELIVERIES)
        return [d for d in data or [] if isinstance(d, dict)]

    async def installations(self) -> list[dict[str, Any]]:
        data = await self._jwt(self.auth.app.rest.apps.async_list_installations, per_page=100)
        return [d for d in data or [] if isinstance(d, dict)]

    async def installation(self, repo: Repo) -> dict[str, Any]:
        return await self.auth.repo_installation(repo)

    async def repository(self, installation: int, repo: Repo) -> dict[str, Any]:
        port: Any = await self.auth.port_for(installation, repo)
        data = await port._call(port.gh.rest.repos.async_get, repo.owner, repo.name)
        if not isinstance(data, dict):
            raise GitHubError(f"GET /repos/{repo.full_name} answered no repository")
        return data

    async def file(self, installation: int, repo: Repo, path: str, ref: str) -> str | None:
        port = await self.auth.port_for(installation, repo)
        found = await port.get_content(repo, path, ref)
        return None if found is None else found.text

    async def runners(self, installation: int, repo: Repo) -> list[dict[str, Any]]:
        """The repository's self-hosted runners (the installation needs ``administration:
        read``: magi's App does not ask for it, so this is asked only when it was granted)."""
        port: Any = await self.auth.port_for(installation, repo)
        rest = port.gh.rest.actions
        data = await port._call(
            rest.async_list_self_hosted_runners_for_repo, repo.owner, repo.name, per_page=100
        )
        return [r for r in (data or {}).get("runners", []) if isinstance(r, dict)]
