"""Agents: the turn contract, the CLI adapters behind it, and the registry of kinds.

Only the contract (``magi.agents.base``) is imported eagerly: code that merely names a
``TurnResult`` (the pure core, fakes) must not pull in subprocess handling and pluggy.
The rest loads on first access.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from magi.agents.base import Agent, CancelToken, TurnRequest, TurnResult, TurnStatus, Usage

if TYPE_CHECKING:
    from magi.agents.cli import Adapter, CliAgent, Invocation, Parsed
    from magi.agents.discover import FoundCli, find_clis
    from magi.agents.hookspecs import AuthStatus, KindSpec, hookimpl, hookspec
    from magi.agents.process import ProcessResult, child_env
    from magi.agents.registry import build_agent, kinds, plugin_manager, unpassed_keys

_LAZY = {
    "Adapter": "cli",
    "CliAgent": "cli",
    "Invocation": "cli",
    "Parsed": "cli",
    "FoundCli": "discover",
    "find_clis": "discover",
    "ProcessResult": "process",
    "child_env": "process",
    "AuthStatus": "hookspecs",
    "KindSpec": "hookspecs",
    "build_agent": "registry",
    "hookimpl": "hookspecs",
    "hookspec": "hookspecs",
    "kinds": "registry",
    "plugin_manager": "registry",
    "unpassed_keys": "registry",
}

__all__ = [
    "Adapter",
    "Agent",
    "AuthStatus",
    "CancelToken",
    "CliAgent",
    "FoundCli",
    "Invocation",
    "KindSpec",
    "Parsed",
    "ProcessResult",
    "TurnRequest",
    "TurnResult",
    "TurnStatus",
    "Usage",
    "build_agent",
    "child_env",
    "find_clis",
    "hookimpl",
    "hookspec",
    "kinds",
    "plugin_manager",
    "unpassed_keys",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
