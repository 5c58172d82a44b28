"""The registry of agent kinds: the plugin manager, the kinds it found, an agent per config.

The contract plugins implement (the hook, ``KindSpec``) lives in ``magi.agents.hookspecs``;
its names are re-exported here for plugins written against this module.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import pluggy

from magi.agents import builtin
from magi.agents.base import Agent
from magi.agents.hookspecs import (
    ENTRY_POINT_GROUP,
    PROJECT,
    AgentFactory,
    AgentKindHooks,
    AuthCheck,
    AuthStatus,
    KindSpec,
    hookimpl,
    hookspec,
)
from magi.errors import AgentError
from magi.model.config import AgentConfig

__all__ = [
    "ENTRY_POINT_GROUP",
    "PROJECT",
    "AgentFactory",
    "AgentKindHooks",
    "AuthCheck",
    "AuthStatus",
    "KindSpec",
    "build_agent",
    "hookimpl",
    "hookspec",
    "kinds",
    "plugin_manager",
    "unpassed_keys",
]


@functools.cache
def plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager: the built-in kinds, then installed plugins."""
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
