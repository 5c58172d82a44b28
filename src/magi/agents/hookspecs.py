"""The plugin contract for agent kinds: the hook, its markers, and what a kind declares.

Split out as simonw/llm splits ``hookspecs``: the built-in kinds (``magi.agents.builtin``)
and third-party plugins import this module, and the registry imports them, so no import
runs in a circle. A plugin is any module or object with a ``magi_register_agent_kinds``
hookimpl, published under the ``magi.agents`` entry-point group::

    from magi.agents.hookspecs import KindSpec, hookimpl

    @hookimpl
    def magi_register_agent_kinds(register):
        register(KindSpec(name="aider", factory=make_aider, executable="aider"))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import pluggy

from magi.agents.base import Agent
from magi.core.seats.clistate import CliState
from magi.model.config import AgentConfig

PROJECT = "magi"
ENTRY_POINT_GROUP = "magi.agents"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

AgentFactory = Callable[[AgentConfig, int], Agent]  # (config, output_max_bytes) -> agent


@dataclass(frozen=True)
class AuthStatus:
    """Whether an agent can log in to its provider, as far as its CLI tells without a model.

    ``ok`` is None when nothing could be checked (the CLI has no status command, or the
    command failed in a way that says nothing about the login); ``fix`` is what to run.
    """

    ok: bool | None
    detail: str
    fix: str = ""


# (the agent's config, the environment its process gets) -> status; bounded in time.
AuthCheck = Callable[[AgentConfig, Mapping[str, str]], AuthStatus]


@dataclass(frozen=True)
class KindSpec:
    """One agent kind: how to build its agent, and what ``magi doctor`` checks for it.

    ``version_argv`` is the full argv, executable first; ``key_env_vars`` are the variables
    that usually hold its credentials (an agent sees them only through ``pass_env``);
    ``auth_check`` asks the CLI whether it is logged in (None: the kind has no login);
    ``state`` is where it keeps sessions and login (``magi.core.seats.clistate``).
    ``egress_hosts`` are where its turns go (``host``, ``host:port``, ``*.domain``), which a
    jailed seat of the kind may reach through magi's proxy.
    """

    name: str
    factory: AgentFactory
    executable: str | None = None
    version_argv: tuple[str, ...] = ()
    key_env_vars: tuple[str, ...] = ()
    auth_check: AuthCheck | None = None
    # Where the CLI keeps its state and which of it is the login: each jailed seat gets its
    # own copy with the login only (docs/jail.md). None: the seat's jail binds no CLI state.
    state: CliState | None = None
    egress_hosts: tuple[str, ...] = ()  # its providers, for the jail's egress allowlist


class AgentKindHooks:
    """The hook specification plugins implement."""

    @hookspec
    def magi_register_agent_kinds(self, register: Callable[[KindSpec], None]) -> None:
        """Call ``register(KindSpec(...))`` once for each kind the plugin provides."""
