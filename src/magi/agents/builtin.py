"""The six built-in agent kinds, registered through the same hook a third-party plugin uses."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

from magi.agents import antigravity, claude, codex, command, gemini, opencode
from magi.agents.base import Agent
from magi.agents.cli import Adapter, CliAgent
from magi.agents.hookspecs import KindSpec, hookimpl
from magi.config.model import AgentConfig

# kind name -> (module holding its metadata, adapter class)
_KINDS: dict[str, tuple[ModuleType, Callable[[AgentConfig], Adapter]]] = {
    "claude": (claude, claude.ClaudeAdapter),
    "codex": (codex, codex.CodexAdapter),
    "opencode": (opencode, opencode.OpencodeAdapter),
    "gemini": (gemini, gemini.GeminiAdapter),
    "antigravity": (antigravity, antigravity.AntigravityAdapter),
    "command": (command, command.CommandAdapter),
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
        )
        for name, (module, adapter) in _KINDS.items()
    ]


@hookimpl
def magi_register_agent_kinds(register: Callable[[KindSpec], None]) -> None:
    for spec in specs():
        register(spec)
