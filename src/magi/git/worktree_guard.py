"""The tamper guard: snapshot what git reads as instructions, and put it back after each turn.

A judge's or reviewer's worktree shares the repository's git directory, and a candidate's
clone (``magi.git.clones``) has one of its own, so an agent can plant a hook, a filter driver,
``core.fsmonitor`` or an ``include.path`` and wait for magi -- or another agent -- to run
git. A snapshot is of one git directory: the repository's, or one candidate's, so what is
found in a clone is that candidate's doing. ``magi.git.repo`` pins what ``-c`` can pin; this
module covers the rest by byte comparison:

* ``<common>/config``, ``<common>/config.worktree`` and ``objects/info/alternates``;
* everything under ``<common>/hooks/`` and ``<common>/info/`` (attributes, exclude, ...);
* for each tracked linked worktree: its ``.git`` file (which names its git directory), and in
  that directory ``config.worktree``, ``commondir``, ``gitdir`` and ``info/``;
* magi's own hooks directory, when the ``Git`` has one.

Anything added, changed or removed is restored byte for byte (mode and symlink-ness
included; a symlink is replaced, never written through) and reported as one human-readable
violation each, config changes at key level. The clean path reads files and never runs git.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from magi.errors import RepoError
from magi.git.repo import Git

_CONFIGS = {"config", "config.worktree"}
_ALTERNATES = Path("objects", "info", "alternates")
_MAX_KEY = 120  # key names are agent-chosen text; a report line stays a line


@dataclass(frozen=True)
class GuardSnapshot:
    """Watched paths as they were: bytes (a symlink's target, for links), or None if absent."""

    common: Path
    files: Mapping[Path, bytes | None]
    modes: Mapping[Path, int]  # full st_mode: file type (regular, symlink, ...) and permissions
    dirs: frozenset[Path]  # directories inside the watched trees
    singles: tuple[Path, ...]  # watched one by one; may be absent
    trees: tuple[Path, ...]  # watched whole, recursively

    @classmethod
    def take(cls, git: Git, worktrees: Sequence[Path] = ()) -> GuardSnapshot:
        # Resolved, so that a symlink found later in one of these paths can only be an agent's.
        common = git.common_dir().resolve()
        # alternates names the object stores git reads as its own (a candidate clone's
        # names the user's; the user's own names none, usually).
        # commondir, which a main git dir never has, would point every later git command
        # (magi's too, outside any jail) at a git dir of the seat's choosing.
        singles = [
            common / "config",
            common / "config.worktree",
            common / _ALTERNATES,
            common / "commondir",
        ]
        trees = [common / "hooks", common / "info"]
        if git.hooks_dir is not None:
            trees.append(git.hooks_dir)
        for wt in (Path(w).resolve() for w in worktrees):
            admin = _admin_dir(wt)
            if admin is None:  # the main worktree: its git dir is the common dir itself
                continue
            singles.append(wt / ".git")
            singles += [admin / n for n in ("config.worktree", "commondir", "gitdir")]
            trees.append(admin / "info")
        return _capture(common, tuple(singles), tuple(trees))


def take(git: Git, worktrees: Sequence[Path] = ()) -> GuardSnapshot:
    """``GuardSnapshot.take``: take it once after prep, and restore against it after each turn."""
    return GuardSnapshot.take(git, worktrees)


def restore(git: Git, snapshot: GuardSnapshot) -> list[str]:
    """Put every watched path back as ``snapshot`` has it; the violations found (empty: clean)."""
    now = _capture(snapshot.common, snapshot.singles, snapshot.trees)
    if now.files == snapshot.files and now.modes == snapshot.modes and now.dirs == snapshot.dirs:
        return []
    paths = set(snapshot.files) | set(now.files)
    differ = sorted(p for p in paths if _entry(snapshot, p) != _entry(now, p))

    # Deletions first, deepest first, so a symlink or file standing where a directory was is
    # gone before that directory is recreated.
    for path in sorted((p for p in differ if _entry(snapshot, p) is None), reverse=True):
        _clear(path)
    for d in sorted(now.dirs - snapshot.dirs, reverse=True):
        shutil.rmtree(d, ignore_errors=True)
    for d in sorted(snapshot.dirs - now.dirs):
        _clear(d)
        d.mkdir(parents=True, exist_ok=True)
    for path in differ:
        old = _entry(snapshot, path)
        if old is not None:
            _put(path, *old)

    violations: list[str] = []
    for path in differ:
        violations += _describe(git, snapshot, now, path)
    return violations


# -- reading ----------------------------------------------------------------------------


def _admin_dir(worktree: Path) -> Path | None:
    """The per-worktree git directory named by a linked worktree's ``.git`` file."""
    dotgit = worktree / ".git"
    if not dotgit.is_file() or dotgit.is_symlink():
        return None
    text = dotgit.read_text(errors="replace").strip()
    if not text.startswith("gitdir:"):
        return None
    return (worktree / text.removeprefix("gitdir:").strip()).resolve()


def _read(path: Path, st: os.stat_result) -> bytes:
    if stat.S_ISLNK(st.st_mode):
        return os.fsencode(os.readlink(path))
    if stat.S_ISREG(st.st_mode):
        return path.read_bytes()
    return b""  # a directory where a file belongs, a fifo, ...: the mode tells them apart


def _capture(common: Path, singles: tuple[Path, ...], trees: tuple[Path, ...]) -> GuardSnapshot:
    files: dict[Path, bytes | None] = {}
    modes: dict[Path, int] = {}
    dirs: set[Path] = set()

    def visit(path: Path, st: os.stat_result) -> None:
        files[path] = _read(path, st)
        modes[path] = st.st_mode

    for path in singles:
        try:
            visit(path, path.lstat())
        except FileNotFoundError:
            files[path] = None
    for root in trees:
        pending = [root]
        while pending:
            path = pending.pop()
            try:
                st = path.lstat()
            except FileNotFoundError:
                continue
            if stat.S_ISDIR(st.st_mode):  # lstat: a symlinked directory is a link, not walked
                dirs.add(path)
                pending += [Path(e.path) for e in os.scandir(path)]
            else:
                visit(path, st)
    return GuardSnapshot(common, files, modes, frozenset(dirs), singles, trees)


def _entry(snap: GuardSnapshot, path: Path) -> tuple[int, bytes] | None:
    data = snap.files.get(path)
    return None if data is None else (snap.modes[path], data)


# -- writing ----------------------------------------------------------------------------


def _clear(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path)


def _put(path: Path, mode: int, data: bytes) -> None:
    parent = path.parent
    if parent.is_symlink():  # never write through a link an agent planted
        parent.unlink()
    parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    if stat.S_ISLNK(mode):
        path.unlink(missing_ok=True)
        os.symlink(os.fsdecode(data), path)
        return
    if not stat.S_ISREG(mode):
        return  # only regular files and links are worth recreating
    # Write beside, then rename over: a concurrent git never reads half a config, and
    # rename replaces a planted symlink instead of following it.
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{path.name}.", suffix=".magi")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, stat.S_IMODE(mode))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# -- describing -------------------------------------------------------------------------


def _label(common: Path, path: Path) -> str:
    return str(path.relative_to(common)) if path.is_relative_to(common) else str(path)


def _describe(git: Git, old: GuardSnapshot, new: GuardSnapshot, path: Path) -> list[str]:
    label = _label(old.common, path)
    before, after = _entry(old, path), _entry(new, path)
    if after is None:
        return [f"{label} removed"]
    link = " (symlink)" if stat.S_ISLNK(after[0]) else ""
    if before is None:
        return [f"{label} added{link}"]
    if before[1] == after[1] and before[0] != after[0]:
        return [f"{label} mode changed"]
    configs = path in old.singles and path.name in _CONFIGS
    if configs and stat.S_ISREG(before[0]) and stat.S_ISREG(after[0]):
        keys = _config_diff(git, before[1], after[1])
        if keys:
            return [f"{label} changed: {k[:_MAX_KEY]}" for k in keys]
    return [f"{label} changed{link}"]


def _config_diff(git: Git, before: bytes, after: bytes) -> list[str]:
    """Keys whose values differ, by git's own parse; empty when git cannot say."""
    try:
        a, b = _config_values(git, before), _config_values(git, after)
    except RepoError:
        return []  # unparseable (that alone is a change worth its line)
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def _config_values(git: Git, content: bytes) -> dict[str, list[str]]:
    # -f - reads stdin; --no-includes so a planted include.path is reported, not followed.
    # Run outside the repository: its own (possibly broken) config must not be read.
    out = git.run(
        "config",
        "--file",
        "-",
        "--no-includes",
        "--list",
        "-z",
        cwd=Path(tempfile.gettempdir()),
        input=content.decode("utf-8", "replace"),
    )
    values: dict[str, list[str]] = {}
    for record in filter(None, out.split("\0")):
        key, _, value = record.partition("\n")
        values.setdefault(key, []).append(value)
    return values
