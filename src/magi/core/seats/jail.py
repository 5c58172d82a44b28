"""The jail policy: what an agent process may read, write and not see, and its bwrap argv.

An agent runs as the same user as magi, so the prompt alone keeps nothing out of its reach.
The jail makes the blind rules hold at the OS level. For every seat:

* the whole filesystem is read-only (``--ro-bind / /``), with a private ``/dev``, ``/proc``
  (its own pid namespace: no other agent's ``/proc/<pid>/environ`` or ``cwd``) and ``/tmp``;
* ``hide`` paths are covered by an empty, read-only tmpfs: ``$MAGI_HOME`` (run records, artifacts,
  other seats' prompts and replies), the user's magi config layer, the main checkout and
  every worktree root of the run;
* the seat's own tree is bound back on top: read-write for implementers and the fixer,
  read-only for judges and reviewers;
* ``read`` paths are bound back read-only (the seat's own prompt file, magi's hooks);
* ``write`` paths are bound back read-write: the CLI's own state and config directories,
  which sessions need, and the git directory the seat commits into.

Mounts are applied parents first (by path depth), and at one depth hide, then read, then
write; so a path bound inside a hidden one reappears, and nothing hidden covers a bind.
``net``: a network of its own, out via magi's proxy only. ``--die-with-parent`` and the pid
namespace end every process of the turn with bwrap. No terminal is within reach (TIOCSTI
injection): magi starts every agent process in a session of its own (``setsid``, so no
controlling terminal) with pipes (or ``/dev/null``) for its stdio, and the jail's ``/dev``
holds no terminal of the user's. That needs every bwrap this argv starts to go through
``magi.agents.process.run``, which does the ``setsid``. bwrap's ``--new-session`` adds
nothing to that, and is not used: its setsid'd pid 1 left each jailed turn as a zombie of
magi's, out of reach of the turn's group.

Pure: paths are strings, and the caller (``magi.sandbox.bwrap``) says which of them exist.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from magi.core.seats.egress import INSIDE_SOCKET, Net

__all__ = [
    "BWRAP_BASE",
    "CLI_STATE",
    "JailSpec",
    "bwrap_argv",
    "policy",
    "state_paths",
    "visible",
    "writes_under",
]

# Before any bind: a read-only root, fresh /dev and /proc, a private /tmp.
BWRAP_BASE = (
    "--die-with-parent",
    "--unshare-pid",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",  # noqa: S108 - the jail's private temp dir, not a shared one
)

# Where each CLI keeps its sessions and settings, "~" for the home directory and "$NAME"
# for a directory an environment variable names (only when it is set).
CLI_STATE: Mapping[str, tuple[str, ...]] = {
    "claude": ("~/.claude", "~/.claude.json", "$CLAUDE_CONFIG_DIR"),
    "codex": ("~/.codex", "$CODEX_HOME"),
    "opencode": (
        "~/.config/opencode",
        "~/.local/share/opencode",
        "~/.local/state/opencode",
        "~/.cache/opencode",
        "$OPENCODE_CONFIG_DIR",
    ),
    "gemini": ("~/.gemini", "$GEMINI_CLI_HOME"),
    "antigravity": ("~/.gemini", "~/.antigravity", "$GEMINI_CLI_HOME"),
}


@dataclass(frozen=True)
class JailSpec:
    """One agent process's view of the filesystem. Paths are absolute and resolved."""

    cwd: str
    hide: tuple[str, ...] = ()
    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    bwrap: str = "bwrap"  # the executable found by detection
    net: Net | None = None  # a network of its own (``magi.core.seats.egress``); None: the host's

    def reading(self, *paths: str) -> JailSpec:
        """The same jail, with ``paths`` (a prompt file) also visible read-only."""
        return replace(self, read=(*self.read, *(p for p in paths if p not in self.read)))

    @property
    def writable(self) -> bool:
        return self.cwd in self.write


def state_paths(kind: str, home: str, environ: Mapping[str, str]) -> tuple[str, ...]:
    """The state and config paths of CLI ``kind`` for a user whose home is ``home``."""
    out: list[str] = []
    for entry in CLI_STATE.get(kind, ()):
        if entry.startswith("$"):
            value = environ.get(entry[1:], "")
            if value:
                out.append(value)
        elif entry.startswith("~/"):
            out.append(str(PurePosixPath(home) / entry[2:]))
    return tuple(dict.fromkeys(out))


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
) -> JailSpec:
    """The jail of one seat working in ``cwd``; ``writable`` for implementers and the fixer.

    ``git_dirs`` are what git needs beyond the tree (a shared common dir): read-only to a
    seat that may not write. ``state`` is always writable: a judge's CLI still keeps its
    session. A hidden path that contains ``cwd`` is still hidden around it.
    """
    mine = (cwd, *git_dirs)
    return JailSpec(
        cwd=cwd,
        hide=tuple(dict.fromkeys(hide)),
        read=tuple(dict.fromkeys([*read, *([] if writable else mine)])),
        write=tuple(dict.fromkeys([*state, *(mine if writable else ())])),
        bwrap=bwrap,
    )


def _depth(path: str) -> int:
    return len(_parts(path))


def bwrap_argv(spec: JailSpec, argv: list[str]) -> list[str]:
    """``argv`` wrapped so that it runs inside ``spec``."""
    ops = [(p, 0, "--tmpfs") for p in spec.hide]
    ops += [(p, 1, "--ro-bind") for p in spec.read]
    ops += [(p, 2, "--bind") for p in spec.write]
    # A path that is bound and also hidden (the cwd inside a hidden root) is bound.
    ops.sort(key=lambda op: (_depth(op[0]), op[1], op[0]))
    out = [spec.bwrap, *BWRAP_BASE]
    if spec.net is not None:  # loopback only; the proxy's socket, if any, is the way out
        out += ["--unshare-net"]
        out += ["--ro-bind", spec.net.socket, INSIDE_SOCKET] if spec.net.socket else []
    for path, _, flag in ops:
        out += [flag, path] if flag == "--tmpfs" else [flag, path, path]
    for path in sorted(set(spec.hide), key=_depth, reverse=True):
        # Last, once every bind inside it has its mount point: a hidden path is not even a
        # scratch space (a write there fails, rather than vanishing into an empty tmpfs).
        out += ["--remount-ro", path]
    out += ["--setenv", "TMPDIR", "/tmp", "--chdir", spec.cwd, "--", *argv]  # noqa: S108
    return out


def visible(spec: JailSpec, path: str) -> str:
    """What the jail lets an agent do with host ``path``: "write", "read" or "hidden".

    The host's ``/tmp`` is hidden behind the private one, like every ``hide`` path.
    """
    best: tuple[int, int, str] = (1, 1, "read")  # the read-only root
    ops = [("/tmp", 0, "hidden")]  # noqa: S108 - the private temp dir
    ops += [(p, 0, "hidden") for p in spec.hide]
    ops += [(p, 1, "read") for p in spec.read]
    ops += [(p, 2, "write") for p in spec.write]
    for p, rank, what in ops:
        if _inside(path, p) and (_depth(p), rank) > best[:2]:
            best = (_depth(p), rank, what)
    return best[2]


def writes_under(spec: JailSpec, path: str) -> bool:
    """Whether the jail lets an agent change anything of host ``path``: ``path`` itself is
    writable, or something bound writable lies inside it."""
    return visible(spec, path) == "write" or any(_inside(w, path) for w in spec.write)
