"""The demo's scripted personas as in-process seats: a whole competition, no process a turn.

``kind = "scripted"`` with ``command = ["<persona>"]`` (see ``magi.demo.scripted``) is an
agent kind that ``register()`` adds to the plugin registry; the test suite registers it
once, in its conftest. A turn is what a ``command`` agent's process would get, made in
the test process: the environment ``process.child_env`` builds with the turn's MAGI_*
variables, the seat's tree as its directory (the git a persona runs gets that
environment too), the prompt. The reply is parsed by the command agent's own rules
(``MAGI-SESSION:`` on stderr, exit 75 a quota), so the engine sees what it would see from
a process, through the ``Agent`` contract and ``FakeAgent``'s way of recording requests.

What only a process can be is refused, not imitated: a persona modifier that hangs,
escapes or waits (``hang-once``, ``hang-at-``, ``escape``, ``wait-for-unlock``), and a turn
the engine meant to jail. Those tests give the seat a ``command`` agent (the e2e tier).
"""

from __future__ import annotations

import io
import time
import traceback
from collections.abc import Callable

from magi.agents.base import TurnRequest, TurnResult, TurnStatus
from magi.agents.cli import turn_vars
from magi.agents.command import CommandAdapter
from magi.agents.hookspecs import KindSpec, hookimpl
from magi.agents.process import child_env
from magi.demo import scripted
from magi.model.config import AgentConfig
from magi.testing.fakes import FakeAgent

__all__ = ["KIND", "PROCESS_ONLY", "in_process", "register", "scripted_agent"]

KIND = "scripted"
# Modifiers that act on a process: a thread cannot be killed, and a fork would fork pytest.
PROCESS_ONLY = ("hang-once", "hang-at-", "escape", "wait-for-unlock")


def in_process(persona: str) -> bool:
    """Whether ``persona`` (with its modifiers) can sit as an in-process seat."""
    return not any(word.startswith(PROCESS_ONLY) for word in persona.split(":"))


def _reply(cfg: AgentConfig, cap: int) -> Callable[[TurnRequest], TurnResult]:
    persona = (cfg.command or [""])[0]
    if not in_process(persona):
        raise ValueError(f"agent {cfg.id!r}: persona {persona!r} needs a process (kind=command)")
    adapter = CommandAdapter(cfg)

    def reply(request: TurnRequest) -> TurnResult:
        if request.jail is not None:
            return TurnResult(
                TurnStatus.ERROR, error=f"{cfg.id}: an in-process seat cannot be jailed"
            )
        env = child_env(request.environ, cfg, turn_vars(request))
        out, err = io.StringIO(), io.StringIO()
        turn = scripted.Turn(env, request.cwd, request.prompt, out, err, child_env=env)
        started = time.monotonic()
        try:
            code = scripted.act(turn, persona)
        except Exception:  # a persona's crash is a process's: a traceback and exit 1
            traceback.print_exc(file=err)
            code = 1
        # Capped as the command agent caps a process's pipes (the head is kept).
        stdout, stderr = out.getvalue()[:cap], err.getvalue()[:cap]
        parsed = adapter.parse(stdout, stderr, code, request)
        return TurnResult(
            status=parsed.status,
            text=parsed.text,
            session_id=parsed.session_id,
            usage=parsed.usage,
            duration_s=time.monotonic() - started,
            error=parsed.error,
            raw_stdout=stdout,
            raw_stderr=stderr,
            exit_code=code,
            failure=parsed.failure,
        )

    return reply


def scripted_agent(cfg: AgentConfig, output_max_bytes: int = 4_000_000) -> FakeAgent:
    """The in-process agent for one ``kind = "scripted"`` entry."""
    return FakeAgent(cfg.id, _reply(cfg, output_max_bytes), kind=KIND)


class _Plugin:
    @hookimpl
    def magi_register_agent_kinds(self, register: Callable[[KindSpec], None]) -> None:
        register(KindSpec(name=KIND, factory=scripted_agent))


def register() -> None:
    """Add ``kind = "scripted"`` to this process's registry (once)."""
    from magi.agents.registry import plugin_manager

    pm = plugin_manager()
    if pm.get_plugin(KIND) is None:
        pm.register(_Plugin(), name=KIND)
