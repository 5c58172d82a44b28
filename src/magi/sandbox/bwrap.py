"""Which jail is in force, and the jail of one seat: bubblewrap detection and path gathering.

``decide`` turns ``[sandbox] mode`` and what this machine allows into a `Decision`, said
once per run (doctor, the run record). ``auto`` takes bwrap when it is installed and
usable, else runs unjailed and says why and what to change; ``bwrap`` insists and fails
as a config error when it cannot have it. Usable means the probe (the jail's own flags
around ``true``) exits 0: an installed bwrap may still be blocked, by Ubuntu 24.04's
AppArmor restriction of unprivileged user namespaces or by a container's seccomp profile.

``seat_spec`` gathers the paths of one seat (resolving them, keeping those that exist,
creating the CLI's missing state directories so its first session can be saved) and hands
them to the pure policy in ``magi.core.seats.jail``.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from magi.agents import process
from magi.core.seats.jail import BWRAP_BASE, JailSpec, policy, state_paths
from magi.errors import ConfigError
from magi.model.config import Sandbox

__all__ = ["Decision", "JailPaths", "blocked_hint", "decide", "probe", "seat_spec"]

_PROBE_TIMEOUT_S = 20.0
APPARMOR_USERNS = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"
MAX_USERNS = "/proc/sys/user/max_user_namespaces"
DEBIAN_USERNS = "/proc/sys/kernel/unprivileged_userns_clone"


@dataclass(frozen=True)
class JailPaths:
    """What a record's context adds to a seat's jail: hidden, git's, and read-only paths."""

    hide: tuple[Path, ...] = ()
    git_dirs: tuple[Path, ...] = ()
    read: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Decision:
    """The jail in force: ``mode`` is what runs, ``configured`` what was asked for."""

    mode: Literal["bwrap", "off"]
    configured: str
    reason: str
    fix: str | None = None  # what to change so that bwrap can run, when it is blocked
    bwrap: str | None = None

    @property
    def jailed(self) -> bool:
        return self.mode == "bwrap"


def probe(bwrap: str) -> tuple[bool, str]:
    """Run ``true`` in a jail with the flags every seat gets; (usable, stderr).

    Through the agents' own process runner: in a session of its own, and what bwrap's pid 1
    leaves to a subreaper magi is reaped with it (``census.reap_group``).
    """
    argv = [bwrap, *BWRAP_BASE, "--", "true"]
    done = process.run(
        argv,
        cwd=None,
        stdin=None,
        # `true` needs no more; the marker keeps a turn's sweep from taking it for an orphan
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "MAGI_RUN": "jail-probe"},
        timeout=_PROBE_TIMEOUT_S,
        output_max_bytes=64 * 1024,
        kill_grace=0.5,
    )
    if done.start_error:
        return False, done.start_error
    if done.timed_out:
        return False, f"bwrap did not finish within {_PROBE_TIMEOUT_S} s"
    return done.exit_code == 0, done.stderr.strip()


def _read(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return ""


def blocked_hint(stderr: str, read: Callable[[str], str] = _read) -> str:
    """What to change so that an installed but failing bwrap runs, from the system's knobs."""
    if read(APPARMOR_USERNS) == "1":
        return (
            "AppArmor restricts unprivileged user namespaces (Ubuntu 23.10+): allow bwrap "
            "with an AppArmor profile (/etc/apparmor.d/bwrap: `abi <abi/4.0>, include "
            "<tunables/global> profile bwrap /usr/bin/bwrap flags=(unconfined) { userns, }`, "
            "then `apparmor_parser -r /etc/apparmor.d/bwrap`), or "
            "`sysctl kernel.apparmor_restrict_unprivileged_userns=0`"
        )
    if read(MAX_USERNS) == "0":
        return "user namespaces are disabled: `sysctl user.max_user_namespaces=15000`"
    if read(DEBIAN_USERNS) == "0":
        return "unprivileged user namespaces are off: `sysctl kernel.unprivileged_userns_clone=1`"
    if Path("/.dockerenv").exists() or Path("/run/.containerenv").exists():
        return (
            "this container forbids new namespaces: start it with `--security-opt "
            "seccomp=unconfined --security-opt apparmor=unconfined` (or `--privileged`), "
            'or set [sandbox] mode = "off" knowingly'
        )
    return f'bwrap failed ({stderr or "no message"}); set [sandbox] mode = "off" knowingly'


def decide(
    cfg: Sandbox,
    *,
    platform: str = sys.platform,
    which: Callable[[str], str | None] = shutil.which,
    run_probe: Callable[[str], tuple[bool, str]] = probe,
    hint: Callable[[str], str] = blocked_hint,
) -> Decision:
    """The jail this machine gives ``cfg``; ``mode = "bwrap"`` that cannot be had raises."""
    asked = cfg.mode
    if asked == "off":
        return Decision("off", asked, '[sandbox] mode = "off": agents run unjailed')
    if not platform.startswith("linux"):
        if asked == "bwrap":
            raise ConfigError(
                f'[sandbox] mode = "bwrap" needs Linux; this is {platform}: '
                'use mode = "auto" or "off"'
            )
        return Decision("off", asked, f"no jail on {platform}: bubblewrap is Linux-only")
    path = which("bwrap")
    if path is None:
        fix = "install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`)"
        if asked == "bwrap":
            raise ConfigError(f'[sandbox] mode = "bwrap" but bwrap is not on PATH: {fix}')
        return Decision("off", asked, "bwrap not found: agents run unjailed", fix=fix)
    ok, stderr = run_probe(path)
    if not ok:
        fix = hint(stderr)
        if asked == "bwrap":
            raise ConfigError(f'[sandbox] mode = "bwrap" but {path} cannot run: {fix}')
        return Decision(
            "off", asked, f"{path} is installed but blocked: agents run unjailed", fix, path
        )
    return Decision("bwrap", asked, f"bubblewrap ({path}) works", bwrap=path)


def _real(paths: Iterable[Path | str]) -> list[str]:
    """Resolved and existing (bwrap cannot mount on a path that is not there).

    Some twenty-five paths per seat turn: the kernel resolves each in one ``open(O_PATH)``
    and ``/proc/self/fd`` names the result, where ``Path.resolve`` stats every component.
    """
    out = []
    for p in paths:
        real = _resolved(os.path.expanduser(os.fspath(p)))
        if real is not None:
            out.append(real)
    return list(dict.fromkeys(out))


def _resolved(path: str) -> str | None:
    """``path`` with every symlink followed, or None when nothing is there."""
    if not _FD_LINKS:
        found = Path(path).resolve()
        return str(found) if found.exists() else None
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    finally:
        os.close(fd)


# Linux names an open file's path under /proc/self/fd; bwrap is Linux-only anyway.
_FD_LINKS = hasattr(os, "O_PATH") and os.path.isdir("/proc/self/fd")


@functools.cache
def _own_install() -> tuple[Path, ...]:
    import magi

    package = Path(magi.__file__).resolve().parent.parent
    return tuple(dict.fromkeys([Path(sys.prefix).resolve(), package]))


def own_install() -> list[Path]:
    """magi's own interpreter environment and package tree, read-only in every jail.

    The jail's ``/tmp`` is private, so a magi installed under it (a CI clone, a virtualenv
    made in a temp dir) would leave a command agent run as ``python -m ...``, or a script
    whose shebang names magi's interpreter, with nothing to start: nothing here is secret.
    """
    return list(_own_install())  # the interpreter and the package do not move under a run


def seat_spec(
    decision: Decision,
    *,
    kind: str,
    cwd: Path,
    writable: bool,
    hide: Iterable[Path | str],
    environ: Mapping[str, str],
    git_dirs: Iterable[Path | str] = (),
    read: Iterable[Path | str] = (),
    state: Iterable[Path | str] = (),
    create: bool = True,
) -> JailSpec | None:
    """The jail of one seat under ``decision``; None when agents run unjailed.

    ``create=False`` (doctor's probe) leaves a missing CLI state directory missing."""
    if not decision.jailed or decision.bwrap is None:
        return None
    home = environ.get("HOME") or str(Path.home())
    own = state_paths(kind, home, environ) if create else ()
    for p in own:  # a directory the CLI would create on its first run: the root is read-only
        path = Path(p)
        if not path.suffix and not path.exists() and path.is_relative_to(home):
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return policy(
        cwd=str(cwd.resolve()),
        writable=writable,
        hide=_real(hide),
        git_dirs=_real(git_dirs),
        state=_real([*own, *state]),
        read=_real([*read, *own_install()]),
        bwrap=decision.bwrap,
    )
