"""The six built-in agent kinds, registered through the same hook a third-party plugin uses."""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import ModuleType

from magi.agents import antigravity, auth, claude, codex, command, gemini, opencode
from magi.agents.base import Agent
from magi.agents.cli import Adapter, CliAgent
from magi.agents.hookspecs import AuthCheck, KindSpec, hookimpl
from magi.model.config import AgentConfig

# kind name -> (module holding its metadata, adapter class, login check)
_KINDS: dict[str, tuple[ModuleType, Callable[[AgentConfig], Adapter], AuthCheck | None]] = {
    "claude": (claude, claude.ClaudeAdapter, auth.check_claude),
    "codex": (codex, codex.CodexAdapter, auth.check_codex),
    "opencode": (
        opencode,
        opencode.OpencodeAdapter,
        functools.partial(auth.check_opencode, key_env_vars=opencode.KEY_ENV_VARS),
    ),
    "gemini": (gemini, gemini.GeminiAdapter, auth.check_gemini),
    "antigravity": (antigravity, antigravity.AntigravityAdapter, auth.check_antigravity),
    "command": (command, command.CommandAdapter, None),  # a command has no login to check
}


def _factory(adapter: Callable[[AgentConfig], Adapter]) -> Callable[[AgentConfig, int], Agent]:
    def make(cfg: AgentConfig, output_max_bytes: int) -> Agent:
        return CliAgent(cfg, adapter(cfg), output_max_bytes=output_max_bytes)

    return make


def specs() -> list[KindSpec]:
    """The built-in kinds' specs, in a fixed order."""
    return [
        KindSpec(
            name=name,
            factory=_factory(adapter),
            executable=module.EXECUTABLE,
            version_argv=tuple(module.VERSION_ARGV),
            key_env_vars=tuple(module.KEY_ENV_VARS),
            auth_check=check,
            state=module.STATE,
            egress_hosts=tuple(module.EGRESS_HOSTS),
        )
        for name, (module, adapter, check) in _KINDS.items()
    ]


@hookimpl
def magi_register_agent_kinds(register: Callable[[KindSpec], None]) -> None:
    for spec in specs():
        register(spec)
