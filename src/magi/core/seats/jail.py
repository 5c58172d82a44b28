"""The jail policy: what an agent process may read, write and not see, and its bwrap argv.

An agent runs as the same user as magi, so the prompt alone keeps nothing out of its reach.
The jail makes the blind rules, and the runner's own secrets, hold at the OS level. A seat
sees by allowlist, never by exception (docs/jail.md has the map and the threat model):

* ``system``: the machine's programs, libraries, certificates and OS config, read-only
  (``/usr``, ``/etc``, ``/opt``, ... as the caller found them; ``links`` are the top-level
  symlinks of a merged ``/usr``), with a fresh ``/dev``, ``/proc`` (its own pid namespace: no
  other agent's ``/proc/<pid>/environ``) and a private ``/tmp``; nothing else of ``/``;
* ``scratch``: the home, an empty writable tmpfs for the turn: nothing of the user's home
  (SSH, gh, cloud and every CLI's logins) is there unless bound back below;
* ``hide``: covered by an empty read-only tmpfs inside what is shown: ``$MAGI_HOME``, the
  user's magi config layer, the main checkout, every worktree root of the run, the runner's
  own install; ``mask``: single files covered by ``/dev/null`` (``/etc/shadow``, a socket);
* ``read``: bound back read-only: toolchains, the agent's own program, magi's install, the
  seat's prompt file and hooks;
* ``write``: bound back read-write: the seat's own tree (and the git directory it commits
  into) for implementers and the fixer, and its scratch state;
* ``binds``: the seat's own copy of its CLI's state, bound read-write where the CLI looks
  (``magi.core.seats.clistate``): no seat shares it with another, nor with the user.

Mounts are applied parents first (by path depth), and at one depth: the system, then hide
and scratch, then mask, read, write; so a path bound inside a hidden one reappears, and
nothing hidden covers a bind. The root itself is an empty tmpfs, read-only once every mount
point is made. ``net``: a network of its own, out via magi's proxy only. ``--die-with-parent``
and the pid namespace end every process of the turn with bwrap. No terminal is within reach
(TIOCSTI injection): magi starts every agent process in a session of its own (``setsid``, so
no controlling terminal) with pipes (or ``/dev/null``) for its stdio, and the jail's ``/dev``
holds no terminal of the user's. That needs every bwrap this argv starts to go through
``magi.agents.process.run``, which does the ``setsid``. bwrap's ``--new-session`` adds
nothing to that, and is not used: its setsid'd pid 1 left each jailed turn as a zombie of
magi's, out of reach of the turn's group.

Pure: paths are strings, and the caller (``magi.sandbox.bwrap``) says which of them exist.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from magi.core.seats.egress import INSIDE_SOCKET, Net

__all__ = [
    "ALWAYS_MASKED",
    "BWRAP_BASE",
    "HOME_SECRETS",
    "SYSTEM",
    "JailSpec",
    "bwrap_argv",
    "policy",
    "visible",
    "writes_under",
]

# Before any bind: no capability (a magi running as root starts bwrap without a user
# namespace, and its seat would keep root's: unmount a mask, remount a bind read-write,
# read any user's files), fresh /dev and /proc, a private /tmp. The root is an empty tmpfs
# of bwrap's; what of the machine is shown is ``JailSpec.system``.
BWRAP_BASE = (
    "--cap-drop",
    "ALL",
    "--die-with-parent",
    "--unshare-pid",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",  # noqa: S108 - the jail's private temp dir, not a shared one
)

# What of the machine every seat may read, where it exists: programs, libraries, the OS's
# config and certificates, the usual homes of toolchains (``/opt/hostedtoolcache``), the
# kernel's read-only views, and the resolver systemd-resolved keeps under /run. Not ``/home``,
# ``/root``, ``/var``, ``/run``, ``/srv``, ``/mnt``, ``/media`` or anything else of ``/``.
SYSTEM = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/sys",
    "/nix",
    "/snap",
    "/run/systemd/resolve",
)

# Secrets inside what SYSTEM shows, hidden from every seat where they exist.
ALWAYS_MASKED = (
    "/etc/ssh",
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssl/private",
    "/etc/docker",
    "/etc/containerd",
    "/etc/rancher",
    "/etc/kubernetes",
    "/etc/apt/auth.conf",
    "/etc/apt/auth.conf.d",
    "/etc/containers/auth.json",
    "/etc/boto.cfg",
    "/nix/var",  # the nix daemon's socket: a trusted user's is root's
)

# Inside a toolchain bound back from the home, the files that are logins, not tools (globs
# under the home): a node's global npmrc (`npm config set -g ..._authToken`), .NET's key store.
HOME_SECRETS = (
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".nvm/.npmrc",
    ".nvm/versions/node/*/etc/npmrc",
    ".npm-global/etc/npmrc",
    ".volta/tools/image/node/*/etc/npmrc",
    ".asdf/installs/nodejs/*/etc/npmrc",
    ".dotnet/corefx/cryptography",
)


@dataclass(frozen=True)
class JailSpec:
    """One agent process's view of the filesystem. Paths are absolute and resolved."""

    cwd: str
    hide: tuple[str, ...] = ()
    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    bwrap: str = "bwrap"  # the executable found by detection
    system: tuple[str, ...] = ()  # the machine's directories shown read-only
    links: tuple[tuple[str, str], ...] = ()  # (path, target): ``/bin`` -> ``usr/bin``
    scratch: tuple[str, ...] = ()  # an empty writable tmpfs each: the home
    mask: tuple[str, ...] = ()  # files covered by /dev/null
    binds: tuple[tuple[str, str], ...] = ()  # (host source, path inside): read-write
    env: tuple[tuple[str, str], ...] = ()  # set inside: a git identity, the home's own
    # A magi running as root: the seat runs as this uid in a user namespace of its own, so
    # it holds no capability over the host's mounts, and a CLI's own sandbox (codex starts
    # bwrap) can map its uid inside (as root without capabilities it cannot map uid 0).
    as_uid: int | None = None
    net: Net | None = None  # a network of its own (``magi.core.seats.egress``); None: the host's

    def reading(self, *paths: str) -> JailSpec:
        """The same jail, with ``paths`` (a prompt file) also visible read-only."""
        return replace(self, read=(*self.read, *(p for p in paths if p not in self.read)))

    @property
    def writable(self) -> bool:
        return self.cwd in self.write


@functools.lru_cache(maxsize=4096)
def _parts(path: str) -> tuple[str, ...]:
    # Parsed once per path: a seat's turn asks about the same few dozen paths hundreds of
    # times, and parsing was a tenth of magi's own CPU per run.
    return PurePosixPath(path).parts


def _inside(path: str, parent: str) -> bool:
    """``PurePosixPath(path).is_relative_to(parent)``: ``parent``'s parts begin ``path``'s."""
    inner, outer = _parts(path), _parts(parent)
    return inner[: len(outer)] == outer


def policy(
    *,
    cwd: str,
    writable: bool,
    hide: Iterable[str],
    git_dirs: Iterable[str] = (),
    state: Iterable[str] = (),
    read: Iterable[str] = (),
    bwrap: str = "bwrap",
    system: Iterable[str] = (),
    links: Iterable[tuple[str, str]] = (),
    scratch: Iterable[str] = (),
    mask: Iterable[str] = (),
    binds: Iterable[tuple[str, str]] = (),
) -> JailSpec:
    """The jail of one seat working in ``cwd``; ``writable`` for implementers and the fixer.

    ``git_dirs`` are what git needs beyond the tree (a shared common dir): read-only to a
    seat that may not write. ``state`` and ``binds`` are always writable: a judge's CLI
    still keeps its session. A hidden path that contains ``cwd`` is still hidden around it.
    """
    mine = (cwd, *git_dirs)
    return JailSpec(
        cwd=cwd,
        hide=tuple(dict.fromkeys(hide)),
        read=tuple(dict.fromkeys([*read, *([] if writable else mine)])),
        write=tuple(dict.fromkeys([*state, *(mine if writable else ())])),
        bwrap=bwrap,
        system=tuple(dict.fromkeys(system)),
        links=tuple(dict.fromkeys(links)),
        scratch=tuple(dict.fromkeys(scratch)),
        mask=tuple(dict.fromkeys(mask)),
        binds=tuple(dict.fromkeys(binds)),
    )


def _depth(path: str) -> int:
    return len(_parts(path))


def _mounts(spec: JailSpec) -> list[tuple[str, int, list[str]]]:
    """(path inside, rank at its depth, bwrap flags) of every mount of ``spec``."""
    ops = [(p, 0, ["--ro-bind", p, p]) for p in spec.system]
    ops += [(p, 0, ["--symlink", target, p]) for p, target in spec.links]
    ops += [(p, 1, ["--tmpfs", p]) for p in (*spec.scratch, *spec.hide)]
    ops += [(p, 2, ["--ro-bind", "/dev/null", p]) for p in spec.mask]
    ops += [(p, 3, ["--ro-bind", p, p]) for p in spec.read]
    ops += [(p, 4, ["--bind", p, p]) for p in spec.write]
    ops += [(dest, 4, ["--bind", src, dest]) for src, dest in spec.binds]
    return ops


def bwrap_argv(spec: JailSpec, argv: list[str]) -> list[str]:
    """``argv`` wrapped so that it runs inside ``spec``."""
    ops = _mounts(spec)
    # A path that is bound and also hidden (the cwd inside a hidden root) is bound.
    ops.sort(key=lambda op: (_depth(op[0]), op[1], op[0]))
    out = [spec.bwrap, *BWRAP_BASE]
    if spec.as_uid is not None:
        out += ["--unshare-user", "--uid", str(spec.as_uid), "--gid", str(spec.as_uid)]
    if spec.net is not None:  # loopback only; the proxy's socket, if any, is the way out
        out += ["--unshare-net"]
        out += ["--ro-bind", spec.net.socket, INSIDE_SOCKET] if spec.net.socket else []
    for _, _, flags in ops:
        out += flags
    for path in sorted(set(spec.hide), key=_depth, reverse=True):
        # Last, once every bind inside it has its mount point: a hidden path is not even a
        # scratch space (a write there fails, rather than vanishing into an empty tmpfs).
        out += ["--remount-ro", path]
    out += ["--remount-ro", "/"]  # the empty root: no file of the seat's lands beside /usr
    for name, value in spec.env:
        out += ["--setenv", name, value]
    out += ["--setenv", "TMPDIR", "/tmp", "--chdir", spec.cwd, "--", *argv]  # noqa: S108
    return out


def visible(spec: JailSpec, path: str) -> str:
    """What the jail lets an agent do with host ``path``: "write", "read" or "hidden".

    Nothing is shown unless ``system``, ``read``, ``write`` or a bind's source names it; the
    host's ``/tmp`` and home are hidden behind private, empty ones, like every ``hide``.
    """
    best: tuple[int, int, str] = (0, -1, "hidden")  # nothing of / but what is named
    ops = [("/tmp", 1, "hidden")]  # noqa: S108 - the private temp dir
    ops += [(p, 0, "read") for p in spec.system]
    ops += [(p, 0, "read") for p, _ in spec.links]
    ops += [(p, 1, "hidden") for p in (*spec.scratch, *spec.hide)]
    ops += [(p, 2, "hidden") for p in spec.mask]
    ops += [(p, 3, "read") for p in spec.read]
    ops += [(p, 4, "write") for p in spec.write]
    ops += [(src, 4, "write") for src, _ in spec.binds]
    ops += [(dest, 5, "hidden") for _, dest in spec.binds]  # the copy stands in its place
    for p, rank, what in ops:
        if _inside(path, p) and (_depth(p), rank) > best[:2]:
            best = (_depth(p), rank, what)
    return best[2]


def writes_under(spec: JailSpec, path: str) -> bool:
    """Whether the jail lets an agent change anything of host ``path``: ``path`` itself is
    writable, or something bound writable lies inside it."""
    writable = (*spec.write, *(src for src, _ in spec.binds))
    return visible(spec, path) == "write" or any(_inside(w, path) for w in writable)
