"""The jail of each seat of a record: decided once per process, recorded, applied per turn.

What a seat may not see is magi's (``$MAGI_HOME``, the user's config layer) plus whatever
the record's context adds through ``SeatContext.jail_paths`` (a competition: the main
checkout, the worktree roots, the git directory seats commit into). Each jailed seat of a
CLI has its own copy of that CLI's state (``magi.sandbox.seat_state``): laid with the
user's login before each turn (``seat_jail``), the login handed back and taken out after it
(``end_seat_state``). The copies live in ``<run>/cli-state/<seat>``, outside the seat's own
``MAGI_STATE_DIR``: a seat reaches its copy only through the binds, never its parent.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import cast

from magi.agents.process import allowlisted_env
from magi.agents.registry import kinds
from magi.core.seats.egress import Allowlist, Net, allowlist
from magi.core.seats.jail import JailSpec
from magi.errors import ConfigError
from magi.model.config import AgentConfig, Config
from magi.model.run import Jail
from magi.sandbox import egress
from magi.sandbox.bwrap import Decision, decide, seat_spec
from magi.sandbox.seat_state import Laid, hand_back, lay
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
        refuse_unjailed(found, sctx.environ)
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


def refuse_unjailed(found: Decision, environ: Mapping[str, str]) -> None:
    """On a runner (``GITHUB_ACTIONS``), no jail is no run: a seat there could read the
    runner's registration key, its SSH keys and every CLI's login, and send them anywhere.
    Only ``[sandbox] mode = "off"`` says otherwise, on purpose."""
    if found.jailed or found.configured == "off" or environ.get("GITHUB_ACTIONS") != "true":
        return
    raise ConfigError(
        f"agents would run unjailed on this runner ({found.reason}), where any seat could "
        "read the runner's registration key, its SSH keys and every CLI's login, and send "
        f"them anywhere. Fix: {found.fix or 'make bubblewrap usable (docs/jail.md)'}; or, to "
        'run them unjailed on purpose, set `[sandbox] mode = "off"` in .magi/config.toml'
    )


def refuse_unjailed_agent(sctx: SeatContext, agent_id: str) -> None:
    """A plugin's own ``Agent`` that does not say it applies the jail it is handed runs
    unjailed: on a runner that is refused as a missing jail is."""
    if sctx.environ.get("GITHUB_ACTIONS") == "true":
        raise ConfigError(
            f"agent {agent_id!r} does not apply the jail (its kind's Agent has no "
            "applies_jail), and on a runner no jail is no run: use a CLI kind, or set "
            '`[sandbox] mode = "off"` in .magi/config.toml to run it unjailed on purpose'
        )


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
    laid = _lay_state(sctx, kind, state_dir.name) if state_dir is not None else Laid()
    spec = seat_spec(
        found,
        binds=laid.binds,
        cwd=cwd,
        writable=writable,
        hide=paths.hide,
        environ=sctx.environ,
        git_dirs=paths.git_dirs,
        # magi's own `magi` (magi ask), and what the config adds to the allowlist
        read=(*paths.read, sctx.run_dir / "bin", *sctx.config.sandbox.read),
        state=[*sctx.config.sandbox.state, *([state_dir] if state_dir else [])],
    )
    return None if spec is None else replace(spec, net=seat_net(sctx, agent_id))


def _state_key(seat: str) -> str:
    return f"cli-state:{seat}"


def _lay_state(sctx: SeatContext, kind: str, seat: str) -> Laid:
    spec = kinds().get(kind)
    if spec is None or spec.state is None or not spec.state.roots:
        return Laid()
    # Where the jail puts the scratch home (a home behind a link, at its real path)
    home = os.path.realpath(sctx.environ.get("HOME") or str(Path.home()))
    where = sctx.run_dir / "cli-state" / seat
    laid = lay(spec.state, home=home, environ=sctx.environ, seat_dir=where)
    with sctx.lock:
        sctx.cache[_state_key(seat)] = laid
    return laid


def end_seat_state(sctx: SeatContext, seat: str) -> None:
    """After a seat's turn: a login its CLI rewrote goes back to the user's, and every
    login leaves the seat's copy (``magi.sandbox.seat_state.hand_back``)."""
    with sctx.lock:
        laid = sctx.cache.pop(_state_key(seat), None)
    if not isinstance(laid, Laid):
        return
    if hand_back(laid, lock_dir=sctx.store.home / "locks"):
        # Not which seat, nor which file: either would say which CLI sat where.
        sctx.event("jail", "a CLI renewed its login during a turn; kept for the next turns")


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
    """``agent_allowlist``, made once a record's context: its config and environment are
    the same for every turn."""
    key = f"egress:{agent_id}"
    cached = sctx.cache.get(key)
    if isinstance(cached, frozenset):
        return cached
    allowed = agent_allowlist(sctx.config, agent_id, sctx.environ)
    with sctx.lock:
        sctx.cache[key] = allowed
    return allowed


def seat_net(sctx: SeatContext, agent_id: str) -> Net:
    """The network of one jailed turn: a proxy of its own allowing `seat_allowlist` (served
    by the process's one accepting thread), or, for a check command with no ``[verify]
    egress``, no way out at all. The caller closes it (``magi.sandbox.egress.close``) when
    the turn ends."""
    allowed = seat_allowlist(sctx, agent_id)
    if not allowed and not agent_id:  # a seat always gets one: its refusals are recorded
        return egress.no_net()
    return egress.open_net(allowed)


def close_net(jail: JailSpec | None) -> list[str]:
    """End a turn's proxy, if it had one: the ``host:port`` of each connection it refused."""
    net = jail.net if jail is not None else None
    return egress.close(net.socket) if net is not None else []
