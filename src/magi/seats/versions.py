"""Which version of its CLI each seat's agent ran: read once a run per agent, kept on the seat.

An election between agents is also one between CLI versions (seed 004): a record that
does not say which ``claude`` or ``codex`` sat cannot be audited, and ``magi stats`` cannot
split a win rate by version. The version is the CLI's own ``--version`` (the kind's
``version_argv``, run through the agent's configured ``command``), read the first time a
seat of that agent is asked, outside the record's lock, and saved with the seat's turn.
A kind without a version command (``command``, a plugin's) or a CLI that does not answer
leaves it None: not read, never guessed.
"""

from __future__ import annotations

from magi.agents.cli import executable
from magi.agents.discover import read_version
from magi.agents.registry import kinds
from magi.seats.context import SeatContext

_KEY = "cli_version:"  # SeatContext.cache, per agent id: the version read (None: none)


def agent_version(sctx: SeatContext, agent_id: str) -> str | None:
    """The CLI version of ``agent_id``, read once per run (per process)."""
    key = _KEY + agent_id
    with sctx.lock:
        if key in sctx.cache:
            known = sctx.cache[key]
            return known if isinstance(known, str) else None
    cfg = sctx.config.agent(agent_id)
    spec = kinds().get(cfg.kind)
    version = None
    if spec is not None and spec.version_argv:
        argv = [*executable(cfg, spec.version_argv[0]), *spec.version_argv[1:]]
        try:
            version = read_version(argv, path=sctx.environ.get("PATH"))
        except Exception:  # a CLI that misbehaves costs the record its version, never a turn
            version = None
    with sctx.lock:
        sctx.cache[key] = version
    return version


def note_version(sctx: SeatContext, seat: str) -> None:
    """Put the version of the CLI that holds ``seat`` on its record, if not there yet (saved
    with the seat's turn). A seat that passed to another agent has its version read anew."""
    record = sctx.record.seats[seat]
    if record.cli_version is not None:
        return
    agent = record.agent
    version = agent_version(sctx, agent)
    with sctx.lock:
        if version is not None and record.agent == agent:
            record.cli_version = version
