"""Can the roster's agents log in? Doctor's and preflight's login check, every agent at once.

Each agent's kind asks its own CLI (``KindSpec.auth_check``, bounded in time) in the
environment the agent's turns get. A seated agent that is not logged in is an error, named
with the seats it holds, so a run does not start only to fail one seat after another; an
unseated one (a failover spare) is a warning, and so is a login that could not be checked.
Implementer seats are named by slot: their labels are drawn per run.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from magi.agents.hookspecs import AuthCheck, AuthStatus
from magi.agents.process import child_env
from magi.errors import AgentError

if TYPE_CHECKING:
    from magi.core.seats.seating import Seating
    from magi.engine.diagnose import Diagnosis
    from magi.model.config import AgentConfig


def seats_held(agent_id: str, seating: Seating | None) -> list[str]:
    """The seats ``agent_id`` is given before any failover, in pipeline order."""
    if seating is None:
        return []
    held = [f"implementer {i}" for i, a in enumerate(seating.implementers, 1) if a == agent_id]
    held += [f"judge-{i}" for i, a in enumerate(seating.judges, 1) if a == agent_id]
    held += [f"review-{i}" for i, a in enumerate(seating.reviewers, 1) if a == agent_id]
    if seating.fixer == agent_id:
        held.append("fix")
    return held


def _ask(check: AuthCheck, agent: AgentConfig, environ: Mapping[str, str]) -> AuthStatus:
    try:
        return check(agent, child_env(environ, agent, {}))
    except Exception as exc:  # a broken plugin check costs doctor one answer, never a traceback
        return AuthStatus(None, f"the login check failed: {exc}")


def check_logins(d: Diagnosis, environ: Mapping[str, str]) -> None:
    """Ask every roster agent whose CLI is on PATH; record each answer and its problems."""
    todo = []
    for entry in d.roster:
        spec = d.kinds.get(entry.agent.kind)
        if entry.path is not None and spec is not None and spec.auth_check is not None:
            todo.append((entry.agent, spec.auth_check))
    if not todo:
        return
    with ThreadPoolExecutor(max_workers=len(todo)) as pool:
        futures = [pool.submit(_ask, check, agent, environ) for agent, check in todo]
        answers = [(agent, f.result()) for (agent, _), f in zip(todo, futures, strict=True)]
    for agent, status in answers:
        d.auth[agent.id] = status
        held = seats_held(agent.id, d.seating)
        who = f"{agent.id} (seat {', '.join(held)})" if held else f"{agent.id} (no seat)"
        fix = f"; {status.fix}" if status.fix else ""
        if status.ok is False and held:
            d.error(AgentError(f"{who}: {status.detail}{fix}"))  # exit 6, as a missing CLI
        elif status.ok is False:
            d.warn(f"{who}: {status.detail}{fix}; failover cannot use it")
        elif status.ok is None:
            d.warn(f"{who}: login not checked: {status.detail}")
