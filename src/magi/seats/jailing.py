"""The jail of each seat of a record: decided once per process, recorded, applied per turn.

What a seat may not see is magi's (``$MAGI_HOME``, the user's config layer) plus whatever
the record's context adds through ``SeatContext.jail_paths`` (a competition: the main
checkout, the worktree roots, the git directory seats commit into).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import cast

from magi.agents.process import allowlisted_env
from magi.agents.registry import kinds
from magi.core.seats.egress import Allowlist, Net, allowlist
from magi.core.seats.jail import JailSpec
from magi.model.config import AgentConfig, Config
from magi.model.run import Jail
from magi.sandbox import egress
from magi.sandbox.bwrap import Decision, decide, seat_spec
from magi.seats.context import SeatContext

_KEY = "jail"
_LOCK = "jail-deciding"


def decision(sctx: SeatContext) -> Decision:
    """The jail in force for this record, decided on first use and stated in the record."""
    cached = sctx.cache.get(_KEY)
    if isinstance(cached, Decision):
        return cached
    # A wave's seats all reach here at once: one of them probes, the others wait for it.
    lock = cast("threading.Lock", sctx.cache.setdefault(_LOCK, threading.Lock()))
    with lock:
        cached = sctx.cache.get(_KEY)
        if isinstance(cached, Decision):
            return cached
        found = decide(sctx.config.sandbox)
        sctx.cache[_KEY] = found
    stated = Jail(mode=found.mode, configured=found.configured, reason=found.reason, fix=found.fix)
    with sctx.lock:
        changed = sctx.record.jail != stated
        sctx.record.jail = stated
    if changed:
        fix = f"; to jail them: {found.fix}" if found.fix else ""
        quiet = found.jailed or found.configured == "off"
        sctx.event("jail", f"jail: {found.mode} ({found.reason}{fix})", "info" if quiet else "warn")
        sctx.save()
    return found


def applies_jail(sctx: SeatContext, agent_id: str) -> bool:
    """Whether ``agent_id``'s turns run inside the jail they are handed: an agent says so
    (``applies_jail``, as ``CliAgent`` does); a plugin's own ``Agent`` that does not is
    taken for an unjailed seat by whatever checks after its turns."""
    agent = sctx.agents.get(agent_id)
    return getattr(agent, "applies_jail", False) is True


def seat_jail(
    sctx: SeatContext, agent_id: str, cwd: Path, writable: bool, state_dir: Path | None = None
) -> JailSpec | None:
    """What the seat's process may see: its own tree and its CLI's state, nothing of magi's.

    ``state_dir`` is the seat's own scratch under the run (MAGI_STATE_DIR), writable even
    for a judge: a command agent has no CLI state directory of its own to keep a thread in.
    """
    found = decision(sctx)
    if not found.jailed:
        return None
    kind = next((a.kind for a in sctx.config.agents if a.id == agent_id), "")
    paths = sctx.jail_paths(cwd, writable=writable)
    spec = seat_spec(
        found,
        kind=kind,
        cwd=cwd,
        writable=writable,
        hide=paths.hide,
        environ=sctx.environ,
        git_dirs=paths.git_dirs,
        read=(*paths.read, sctx.run_dir / "bin"),  # magi's own `magi` (magi ask)
        state=[*sctx.config.sandbox.state, *([state_dir] if state_dir else [])],
    )
    return None if spec is None else replace(spec, net=seat_net(sctx, agent_id))


def agent_allowlist(config: Config, agent_id: str, environ: Mapping[str, str]) -> Allowlist:
    """Where ``agent_id``'s turns may connect: its kind's providers, the base URLs its
    environment and argv name (what the agent process is given, not all of magi's), and
    ``[sandbox] egress``. A check command (``agent_id`` "") gets ``[verify] egress`` alone."""
    if not agent_id:
        return allowlist(extra=config.verify.egress, where="[verify] egress")
    cfg = next((a for a in config.agents if a.id == agent_id), None)
    if cfg is None:  # not in the roster: nothing of a kind's to allow
        return allowlist(extra=config.sandbox.egress)
    spec = kinds().get(cfg.kind)
    return allowlist(
        defaults=spec.egress_hosts if spec is not None else (),
        environ=agent_environ(cfg, environ),
        argv=agent_argv(cfg),
        extra=config.sandbox.egress,
    )


def agent_environ(cfg: AgentConfig, environ: Mapping[str, str]) -> dict[str, str]:
    """What of ``environ`` an agent process is given that can name a base URL."""
    return {**allowlisted_env(environ, cfg.pass_env), **cfg.env}


def agent_argv(cfg: AgentConfig) -> list[str]:
    return [*(cfg.command or []), *cfg.args]


def seat_allowlist(sctx: SeatContext, agent_id: str) -> Allowlist:
    return agent_allowlist(sctx.config, agent_id, sctx.environ)


def seat_net(sctx: SeatContext, agent_id: str) -> Net:
    """The network of one jailed turn: a proxy of its own allowing `seat_allowlist`, or,
    for a check command with no ``[verify] egress``, no way out at all. The caller closes
    it (``magi.sandbox.egress.close``) when the turn ends."""
    allowed = seat_allowlist(sctx, agent_id)
    if not allowed and not agent_id:  # a seat always gets one: its refusals are recorded
        return egress.no_net()
    return egress.open_net(allowed)


def close_net(jail: JailSpec | None) -> list[str]:
    """End a turn's proxy, if it had one: the ``host:port`` of each connection it refused."""
    net = jail.net if jail is not None else None
    return egress.close(net.socket) if net is not None else []
