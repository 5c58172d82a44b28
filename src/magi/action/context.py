"""What the Action's commands are handed: the GitHub port for a token (and, for the
App's own JWT calls, the transport they go through).

The App is built with its ports (``create_app(ports=)``). The Action's commands reach the
CLI through an entry point, so theirs rides on the command line's context: a caller (a test,
a program embedding magi) invokes the command line with ``obj=ActionContext(...)``, and
``magi``'s root keeps it as ``Options.given``. Without one, a command gets the real
githubkit port. Nothing here is imported by the agents job, which holds no token.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    import httpx

    from magi.action.env import ActionEnv
    from magi.github.port import GitHubPort

__all__ = ["ActionContext", "PortFactory", "context_of"]

PortFactory = Callable[[str, str], "GitHubPort"]  # (api_url, token) -> port


def _githubkit_port(api_url: str, token: str) -> GitHubPort:
    from magi.github.githubkit_port import token_port

    return token_port(api_url, token)


@dataclass(frozen=True)
class ActionContext:
    """The Action's injected ports; the default is GitHub itself."""

    ports: PortFactory = _githubkit_port
    # Where the App's own JWT calls go (``token-refused``): GitHub itself when None.
    app_transport: httpx.AsyncBaseTransport | None = None

    def port(self, env: ActionEnv, token: str) -> GitHubPort:
        """The GitHub port for ``token``, at the API the runner names."""
        return self.ports(env.api_url, token)

    def publishing_port(self, env: ActionEnv, token: str) -> GitHubPort:
        """The port of a command that writes magi's markers: behind ``magi.github.sealed``,
        so every body it writes is cleaned of markers that are not sealed by magi's key."""
        from magi.github.sealed import sealed

        return sealed(self.port(env, token), env.seal)


def context_of(ctx: typer.Context) -> ActionContext:
    """The context the command line was invoked with, else GitHub's."""
    root = ctx.find_root().obj
    given = getattr(root, "given", root)  # under ``magi``'s root its Options carry it
    return given if isinstance(given, ActionContext) else ActionContext()
