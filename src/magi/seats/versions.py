"""Which version of its CLI each seat's agent ran: read once a run per agent, kept on the seat.

An election between agents is also one between CLI versions (seed 004): a record that
does not say which ``claude`` or ``codex`` sat cannot be audited, and ``magi stats`` cannot
split a win rate by version. The version is the CLI's own ``--version`` (the kind's
``version_argv``, run through the agent's configured ``command``), read the first time a
seat of that agent is asked, on a thread beside that turn (outside the record's lock), and
saved with the seat's turn.
A kind without a version command (``command``, a plugin's) or a CLI that does not answer
leaves it None: not read, never guessed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future

from magi.agents.cli import executable
from magi.agents.discover import read_version
from magi.agents.registry import kinds
from magi.seats.context import SeatContext

__all__ = ["VERSION_WAIT_S", "start_version"]

_KEY = "cli_version:"  # SeatContext.cache, per agent id: a Future of the version read
# A node CLI on a busy runner can take seconds to print its version; read beside the turn,
# the wait costs the turn nothing unless the CLI hangs, so it can be generous.
VERSION_WAIT_S = 30.0


def _read(sctx: SeatContext, agent_id: str) -> str | None:
    cfg = sctx.config.agent(agent_id)
    spec = kinds().get(cfg.kind)
    if spec is None or not spec.version_argv:
        return None
    argv = [*executable(cfg, spec.version_argv[0]), *spec.version_argv[1:]]
    try:
        return read_version(argv, path=sctx.environ.get("PATH"), timeout=VERSION_WAIT_S)
    except Exception:  # a CLI that misbehaves costs the record its version, never a turn
        return None


def _future(sctx: SeatContext, agent_id: str) -> Future[str | None]:
    """The read of ``agent_id``'s version: started once per run (per process), on a thread
    of its own, shared by every seat of that agent."""
    key = _KEY + agent_id
    with sctx.lock:
        known = sctx.cache.get(key)
        if isinstance(known, Future):
            return known
        fut: Future[str | None] = Future()
        sctx.cache[key] = fut

    def read() -> None:
        fut.set_result(_read(sctx, agent_id))

    threading.Thread(target=read, name=f"magi-version-{agent_id}", daemon=True).start()
    return fut


def start_version(sctx: SeatContext, seat: str) -> Callable[[], None]:
    """Begin reading the version of the CLI that holds ``seat`` beside its turn (a node CLI
    takes seconds to answer ``--version``, which must not delay the turn); the call returned
    waits for it and puts it on the seat's record, saved with the turn."""
    record = sctx.record.seats[seat]
    if record.cli_version is not None:
        return lambda: None
    agent = record.agent
    fut = _future(sctx, agent)

    def note() -> None:
        version = fut.result()
        with sctx.lock:
            if version is not None and record.agent == agent and record.cli_version is None:
                record.cli_version = version

    return note
