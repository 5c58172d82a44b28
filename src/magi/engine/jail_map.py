"""``magi doctor``'s map of what a seat of each roster CLI sees in the jail, and why.

Made from the very ``JailSpec`` a seat's turn gets (``magi.sandbox.bwrap.seat_spec``), with
the seat's own CLI copy bound where its CLI looks (``magi.sandbox.seat_state``): what is
visible (read-only), writable and hidden, each with the reason, so a runner's operator can
check it before any agent runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from magi.agents.hookspecs import KindSpec
from magi.agents.programs import program_paths
from magi.core.seats.clistate import resolved
from magi.core.seats.jail import ALWAYS_MASKED
from magi.sandbox.bwrap import Decision, own_install, runner_roots, seat_spec

__all__ = ["MapRow", "jail_map"]


@dataclass(frozen=True)
class MapRow:
    access: str  # "visible", "writable" or "hidden"
    path: str
    why: str


def _why_read(path: str, home: str, program: list[str], magi: set[str]) -> str:
    if path in magi:
        return "magi's own install"
    if path in program:
        return "the CLI's own program and install"
    if path.startswith(home.rstrip("/") + "/"):
        return "a toolchain in the home (no login in it)"
    return "a toolchain (the runner's tool cache, [sandbox] read)"


def jail_map(
    decision: Decision,
    spec_of: KindSpec,
    *,
    cwd: Path,
    environ: Mapping[str, str],
    hide: list[Path],
    executable: str | None,
) -> list[MapRow]:
    """What a seat of ``spec_of``'s CLI working in ``cwd`` sees; [] when unjailed."""
    home = environ.get("HOME") or str(Path.home())
    roots = spec_of.state.roots if spec_of.state is not None else ()
    binds = [("(the seat's own copy)", w) for r in roots if (w := resolved(r, home, environ))]
    spec = seat_spec(decision, cwd=cwd, writable=True, hide=hide, environ=environ, binds=binds)
    if spec is None:
        return []
    program = program_paths(spec, [executable], environ.get("PATH")) if executable else []
    spec = spec.reading(*program)
    magi = {str(p) for p in own_install()}
    system = "the system: programs, libraries, certificates"
    rows = [MapRow("visible", p, system) for p in spec.system]
    rows += [MapRow("visible", p, _why_read(p, home, program, magi)) for p in spec.read]
    rows.append(MapRow("writable", spec.cwd, "its own tree (read-only for judges and reviewers)"))
    for root in roots:
        where = resolved(root, home, environ)
        if where is None:
            continue
        logins = ", ".join(
            (login.path or Path(where).name) + (f" [{', '.join(login.keys)}]" if login.keys else "")
            for login in root.logins
        )
        what = f"the user's login ({logins}) laid in each turn" if logins else "nothing of yours"
        rows.append(MapRow("writable", where, f"the seat's own copy: {what}"))
    rows += [
        MapRow("writable", p, "[sandbox] state, the seat's scratch")
        for p in spec.write
        if p != spec.cwd
    ]
    rows += [
        MapRow("hidden", p, "the rest of the home: SSH, gh, cloud and every CLI's logins")
        for p in spec.scratch
    ]
    runners = {str(r) for r in runner_roots(environ, cwd)}
    for p in spec.hide:
        if p in runners:
            why = "the runner's own files (.credentials, .runner, .env, _diag)"
        elif p in ALWAYS_MASKED:
            why = "a secret of the system"
        else:
            why = "magi's home, the run's checkouts"
        rows.append(MapRow("hidden", p, why))
    rows += [MapRow("hidden", p, "a secret or a socket, covered") for p in spec.mask]
    rows.append(MapRow("hidden", "/ (the rest)", "/root, /home, /var, /run, /srv: never shown"))
    return rows
