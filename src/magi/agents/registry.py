"""Agent kinds as plugins: one pluggy hook, used by the built-in kinds and third parties alike.

A plugin is any module or object with a ``magi_register_agent_kinds(register)`` hookimpl,
published under the ``magi.agents`` entry-point group::

    from magi.agents.registry import KindSpec, hookimpl

    @hookimpl
    def magi_register_agent_kinds(register):
        register(KindSpec(name="aider", factory=make_aider, executable="aider"))
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import pluggy

from magi.agents.base import Agent
from magi.config.model import AgentConfig
from magi.errors import AgentError

PROJECT = "magi"
ENTRY_POINT_GROUP = "magi.agents"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

AgentFactory = Callable[[AgentConfig, int], Agent]  # (config, output_max_bytes) -> agent


@dataclass(frozen=True)
class KindSpec:
    """One agent kind: how to build its agent, and what ``magi doctor`` checks for it.

    ``version_argv`` is the full argv, executable first; ``key_env_vars`` are the variables
    that usually hold its credentials (an agent sees them only through ``pass_env``).
    """

    name: str
    factory: AgentFactory
    executable: str | None = None
    version_argv: tuple[str, ...] = ()
    key_env_vars: tuple[str, ...] = ()


class AgentKindHooks:
    """The hook specification plugins implement."""

    @hookspec
    def magi_register_agent_kinds(self, register: Callable[[KindSpec], None]) -> None:
        """Call ``register(KindSpec(...))`` once for each kind the plugin provides."""


@functools.cache
def plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager: the built-in kinds, then installed plugins."""
    from magi.agents import builtin  # imported here: builtin imports this module

    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(AgentKindHooks)
    # Registered by hand under its entry-point name, so magi works from a source tree too
    # and the entry point (same name) is then skipped rather than registered twice.
    pm.register(builtin, name="builtin")
    pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    return pm


def kinds() -> dict[str, KindSpec]:
    """Every registered kind by name. Two plugins claiming one name is an error."""
    found: dict[str, KindSpec] = {}
    clashes: list[str] = []

    def register(spec: KindSpec) -> None:
        if spec.name in found:
            clashes.append(spec.name)
        found[spec.name] = spec

    plugin_manager().hook.magi_register_agent_kinds(register=register)
    if clashes:
        raise AgentError(f"agent kind(s) registered more than once: {', '.join(sorted(clashes))}")
    return dict(sorted(found.items()))


def build_agent(cfg: AgentConfig, *, output_max_bytes: int = 4_000_000) -> Agent:
    """The agent for one ``[[agents]]`` entry."""
    known = kinds()
    spec = known.get(cfg.kind)
    if spec is None:
        raise AgentError(
            f"agent {cfg.id!r}: unknown kind {cfg.kind!r}; known kinds: {', '.join(known)}"
        )
    return spec.factory(cfg, output_max_bytes)


def unpassed_keys(agent_cfg: AgentConfig, environ: Mapping[str, str]) -> list[str]:
    """Credential variables set in ``environ`` that this agent's process will not see.

    For ``magi doctor``: "X is set in your environment but not passed to agent Y".
    """
    spec = kinds().get(agent_cfg.kind)
    if spec is None:
        return []
    given = {*agent_cfg.pass_env, *agent_cfg.env}
    return [k for k in spec.key_env_vars if environ.get(k) and k not in given]
