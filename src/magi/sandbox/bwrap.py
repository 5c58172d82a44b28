"""Which jail is in force, and the jail of one seat: bubblewrap detection and path gathering.

``decide`` turns ``[sandbox] mode`` and what this machine allows into a `Decision`, said
once per run (doctor, the run record). ``auto`` takes bwrap when it is installed and
usable, else runs unjailed and says why and what to change; ``bwrap`` insists and fails
as a config error when it cannot have it. Usable means the probe (the jail's own flags
around ``true``) exits 0: an installed bwrap may still be blocked, by Ubuntu 24.04's
AppArmor restriction of unprivileged user namespaces or by a container's seccomp profile.

``seat_spec`` gathers the paths of one seat (resolving them, keeping those that exist): the
machine's system directories, the toolchains in the home, the runner's own install to hide,
and hands them to the pure policy in ``magi.core.seats.jail``. ``system_view`` is what of
``/`` every jail shows, found once per process.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from magi.agents import process
from magi.core.seats.jail import (
    ALWAYS_MASKED,
    HOME_SECRETS,
    SYSTEM,
    JailSpec,
    bwrap_argv,
    policy,
    visible,
)
from magi.errors import ConfigError
from magi.git.repo import NEUTRAL_EMAIL, NEUTRAL_NAME
from magi.model.config import Sandbox

__all__ = [
    "TOOLCHAINS",
    "Decision",
    "JailPaths",
    "blocked_hint",
    "decide",
    "probe",
    "runner_roots",
    "seat_spec",
    "system_view",
]

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
    dirs, links = system_view()
    # Not only that it starts: that the seat holds no capability (a jail that keeps root's
    # can be taken apart from inside), which exits 1 here otherwise.
    capless = ["/bin/sh", "-c", 'grep -q "^CapEff:[[:space:]]*0*$" /proc/self/status']
    spec = JailSpec(cwd="/", bwrap=bwrap, system=dirs, links=links, as_uid=seat_uid())
    argv = bwrap_argv(spec, capless)
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


ROOT_SEAT_UID = 1000


def seat_uid() -> int | None:
    """The uid a seat runs as inside its jail when magi runs as root (``JailSpec.as_uid``);
    None otherwise: an unprivileged bwrap keeps the user's own uid in its namespace."""
    return ROOT_SEAT_UID if os.geteuid() == 0 else None


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
        # Not `--privileged`: that hands the container, and a seat that escaped the jail,
        # the host's devices.
        return (
            "this container forbids new namespaces: start it with `--security-opt "
            "seccomp=unconfined --security-opt apparmor=unconfined`, "
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
def system_view() -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """(directories, top-level symlinks) of ``SYSTEM`` that this machine has: a merged
    ``/usr``'s ``/bin -> usr/bin`` is made a link inside the jail, not a second bind."""
    dirs: list[str] = []
    links: list[tuple[str, str]] = []
    for path in SYSTEM:
        if os.path.islink(path) and path.count("/") == 1:
            links.append((path, os.readlink(path)))
            continue
        real = _resolved(path)
        if real is not None and os.path.isdir(real):
            dirs.append(real)
    return tuple(dict.fromkeys(dirs)), tuple(links)


@functools.cache
def _system_secrets() -> tuple[str, ...]:
    """``ALWAYS_MASKED`` that this machine has: looked for once a process, not every turn."""
    return tuple(p for p in ALWAYS_MASKED if os.path.lexists(p))


# What the repository's checks and the agents' own tools may need from the home: language
# toolchains and their package caches, never a login (``HOME_SECRETS`` stay masked inside).
TOOLCHAINS = (
    ".pyenv",
    ".nvm/versions",
    ".nvm/nvm.sh",
    ".rustup",
    ".cargo/bin",  # not ~/.cargo itself: its credentials.toml is a registry token
    ".cargo/registry",
    ".cargo/git",
    ".volta",
    ".asdf",
    ".rbenv",
    ".nodenv",
    ".goenv",
    ".sdkman",
    ".bun",
    ".deno",
    ".local/bin",
    ".local/lib",
    ".local/share/pnpm",
    ".npm-global",
    ".dotnet",
    ".juliaup",
    ".elan",
    ".ghcup",
    "go",
)
# A configured runner has ``.runner`` beside its ``.credentials``; an unconfigured one its bin.
_RUNNER_MARKS = (".runner", "bin/Runner.Listener")
_RUNNER_HOMES = ("/opt", "/usr/local", "/srv")
_RUNNER_VARS = ("GITHUB_WORKSPACE", "RUNNER_WORKSPACE", "RUNNER_TEMP", "RUNNER_TOOL_CACHE")


@functools.lru_cache(maxsize=1024)
def _is_runner(path: Path) -> bool:
    """Asked of every folder above a seat's tree, every turn: answered once a process for
    each (the trees of a run share their parents), as ``_installed_runners`` is."""
    return len(path.parts) > 1 and any((path / m).exists() for m in _RUNNER_MARKS)


@functools.lru_cache(maxsize=8)
def _installed_runners(homes: tuple[str, ...]) -> tuple[Path, ...]:
    """Runners installed where the jail shows the system (``/opt/actions-runner``, a second
    one beside it), one or two levels down, whatever the environment says: a runner whose
    work folder is elsewhere, or a magi run by hand on a machine that hosts one. Looked for
    once a process: a runner is not installed under a run."""
    found: list[Path] = []
    for top in homes:
        for first in _children(Path(top)):
            if _is_runner(first):
                found.append(first)
                continue
            found += [second for second in _children(first) if _is_runner(second)]
    return tuple(found)


def _children(path: Path) -> list[Path]:
    try:
        return [Path(e.path) for e in os.scandir(path) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def runner_roots(environ: Mapping[str, str], cwd: Path) -> list[Path]:
    """The GitHub Actions runner installs on this machine: the nearest parent of the
    runner's workspace variables (and of ``cwd``) that holds a runner's own files, and any
    installed under the system paths a seat is shown."""
    starts = [Path(environ[v]) for v in _RUNNER_VARS if environ.get(v, "").startswith("/")]
    found: list[Path] = []
    for start in [*starts, cwd]:
        found += [parent for parent in [start, *start.parents] if _is_runner(parent)][:1]
    return list(dict.fromkeys([*found, *_installed_runners(_RUNNER_HOMES)]))


def _home_reads(home: str, environ: Mapping[str, str]) -> list[str]:
    """The toolchains in the home and the PATH entries under it, never the home itself.

    Looked for once a process (some thirty paths resolved, most of them absent); a turn
    checks only that those found are still there (bwrap cannot bind a path that is gone). A
    toolchain installed while magi runs is shown once it starts again."""
    return [p for p in _home_reads_of(home, environ.get("PATH", "")) if os.path.lexists(p)]


@functools.lru_cache(maxsize=8)
def _home_reads_of(home: str, path: str) -> tuple[str, ...]:
    wanted = [os.path.join(home, t) for t in TOOLCHAINS]
    for entry in path.split(os.pathsep):
        if entry.startswith(home.rstrip("/") + "/"):
            wanted.append(entry)
    return tuple(p for p in _real(wanted) if p != home and not home.startswith(p.rstrip("/") + "/"))


def _sockets(environ: Mapping[str, str]) -> list[str]:
    """The agent and container sockets this process's environment names."""
    out = [environ.get("SSH_AUTH_SOCK", "")]
    docker = environ.get("DOCKER_HOST", "")
    if docker.startswith("unix://"):
        out.append(docker.removeprefix("unix://"))
    return [p for p in out if p.startswith("/")]


@functools.cache
def _own_install() -> tuple[Path, ...]:
    import magi

    package = Path(magi.__file__).resolve().parent.parent
    prefixes = (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)
    return tuple(dict.fromkeys([*(Path(p).resolve() for p in prefixes), package]))


@functools.cache
def _own_install_real() -> tuple[str, ...]:
    return tuple(_real(_own_install()))


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
    cwd: Path,
    writable: bool,
    hide: Iterable[Path | str],
    environ: Mapping[str, str],
    git_dirs: Iterable[Path | str] = (),
    read: Iterable[Path | str] = (),
    state: Iterable[Path | str] = (),
    binds: Iterable[tuple[Path | str, str]] = (),
) -> JailSpec | None:
    """The jail of one seat under ``decision``; None when agents run unjailed.

    ``binds`` are the seat's own copies of its CLI's state, (copy, where the CLI looks)."""
    if not decision.jailed or decision.bwrap is None:
        return None
    home = _resolved(environ.get("HOME") or str(Path.home())) or "/"
    where = cwd.resolve()
    runners = runner_roots(environ, where)
    tools: list[Path | str] = [r / "_work" / "_tool" for r in runners]
    tools += [t for t in [environ.get("RUNNER_TOOL_CACHE", "")] if t]
    dirs, links = system_view()
    shown = _system_secrets()
    spec = policy(
        cwd=str(where),
        writable=writable,
        # A runner installed in the home itself (actions-runner-controller's image) is
        # hidden by the scratch home already: a second, read-only tmpfs would shut the home.
        hide=[
            *_real(hide),
            *(r for r in _real(runners) if r != home),
            *(p for p in shown if os.path.isdir(p)),
        ],
        git_dirs=_real(git_dirs),
        state=_real(state),
        read=[*_home_reads(home, environ), *_real([*tools, *read]), *_own_install_real()],
        bwrap=decision.bwrap,
        system=dirs,
        links=links,
        scratch=[home] if home != "/" else [],
        mask=[p for p in shown if not os.path.isdir(p)],
        binds=[(str(src), dest) for src, dest in binds],
    )
    found = [g for s in HOME_SECRETS for g in glob.glob(os.path.join(glob.escape(home), s))]
    secrets = [p for p in _real([*found, *_sockets(environ)]) if visible(spec, p) != "hidden"]
    masked = [p for p in secrets if not os.path.isdir(p)]
    covered = [p for p in secrets if os.path.isdir(p)]
    # The user's ~/.gitconfig is hidden with the home: a seat commits as magi's neutral
    # identity (which the hand-back writes anyway), never as nobody, nor as the user.
    ident = (("NAME", NEUTRAL_NAME), ("EMAIL", NEUTRAL_EMAIL))
    env = tuple((f"GIT_{who}_{k}", v) for who in ("AUTHOR", "COMMITTER") for k, v in ident)
    if home not in ("/", environ.get("HOME")):
        env += (("HOME", home),)  # a home behind a link: the scratch is at its real path
    return replace(
        spec,
        mask=(*spec.mask, *dict.fromkeys(masked)),
        hide=(*spec.hide, *dict.fromkeys(covered)),
        env=env,
        as_uid=seat_uid(),
    )
