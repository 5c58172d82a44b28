"""Each seat its own CLI state: a copy in the seat's folder, bound where its CLI looks.

``lay`` runs before every turn of a jailed seat. The copy of each place the CLI keeps state
(``magi.core.seats.clistate.Root``) is made empty on the seat's first turn (a cache is
seeded from the user's), and only the user's login is laid into it: never an instruction
(``CLAUDE.md``, ``AGENTS.md``, ``GEMINI.md``), hook, settings or MCP file. What the seat
writes there (its sessions) stays its own for its next turns, and reaches no other seat,
CLI, run, nor the user's own state.

``hand_back`` runs after the turn: a login the CLI rewrote (a refreshed OAuth token) is put
back in the user's file, under a lock and only if that file is still the one laid, so the
user and the seat's siblings (who are laid the user's file before their next turn) keep a
login that works; then the login is taken out of the copy, so none rests in a run's folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from magi.core.seats.clistate import (
    CliState,
    Login,
    login_part,
    merge_login,
    renewal,
    resolved,
    without_login,
)

__all__ = ["Laid", "hand_back", "lay"]


@dataclass(frozen=True)
class LaidLogin:
    user: Path
    copy: Path
    root: Path  # the seat's copy it lies in
    keys: tuple[str, ...]
    sent: bytes | None  # what was laid, to tell a login the CLI rewrote


@dataclass(frozen=True)
class Laid:
    binds: tuple[tuple[str, str], ...] = ()  # (copy, where the CLI looks)
    logins: tuple[LaidLogin, ...] = ()


READ_MAX = 1024 * 1024  # a login or settings file; anything larger is no login


def _read(path: Path, *, follow: bool = True) -> bytes | None:
    """A regular file's bytes, or None. Never blocks (a fifo the seat left in its copy) nor
    reads without bound (a sparse file); ``follow=False`` for the seat's copy, where a link
    would lead magi elsewhere."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > READ_MAX:
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read(READ_MAX + 1)[:READ_MAX]
    finally:
        os.close(fd)


def _unlinked(root: Path, path: Path) -> Path:
    """``path`` in the seat's copy, with any link (or fifo, socket, device) the seat put on
    its way removed: magi reads and writes the copy from outside the jail, where a link
    would lead elsewhere (to another CLI's login, or the user's SSH key)."""
    for part in [*reversed(path.relative_to(root).parents), path.relative_to(root)]:
        here = root / part
        if here == root:
            continue
        try:
            mode = here.lstat().st_mode
        except OSError:
            break
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
            here.unlink()
    return path


def _write(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Atomically: a CLI starting at the same moment reads the old file or the new one."""
    tmp = path.with_name(f".{path.name}.magi-tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    tmp.replace(path)


def _made(copy: Path, user: str, *, file: bool, seed: bool) -> None:
    if copy.exists() or copy.is_symlink():
        return
    copy.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if file:
        _write(copy, b"{}")  # every file root is a CLI's JSON settings file
    elif seed and os.path.isdir(user):
        shutil.copytree(user, copy, symlinks=True)
    else:
        copy.mkdir(mode=0o700)


def _lay_login(login: Login, user: Path, root: Path) -> LaidLogin:
    copy = _unlinked(root, root / login.path if login.path else root)
    if copy != root and copy.is_dir():
        _remove(copy)
    if login.keys:
        part = login_part((_read(user) or b"").decode("utf-8", "replace"), login.keys)
        seat = _read(copy, follow=False)
        merged = merge_login(seat.decode("utf-8", "replace") if seat else None, part, login.keys)
        copy.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _write(copy, merged.encode())
        return LaidLogin(user, copy, root, login.keys, json.dumps(part, sort_keys=True).encode())
    data = _read(user)
    if data is None:
        _remove(copy)
    else:
        copy.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _write(copy, data)
    return LaidLogin(user, copy, root, (), data)


def lay(state: CliState, *, home: str, environ: Mapping[str, str], seat_dir: Path) -> Laid:
    """The seat's copies made, its logins laid; what to bind where."""
    binds: dict[str, str] = {}  # where the CLI looks -> its copy
    logins: list[LaidLogin] = []
    for root in state.roots:
        where = resolved(root, home, environ)
        if where is None:
            continue
        tag = hashlib.sha256(where.encode()).hexdigest()[:8]
        copy = seat_dir / "cli" / f"{tag}-{Path(where).name}"
        if where not in binds:  # a variable naming the default place: one copy, both logins
            _made(copy, where, file=root.file, seed=root.seed)
            binds[where] = str(copy)
        for login in root.logins:
            user = Path(where) / login.path if login.path else Path(where)
            if all(laid.user != user for laid in logins):
                logins.append(_lay_login(login, user, copy))
    return Laid(tuple((c, w) for w, c in binds.items()), tuple(logins))


@contextlib.contextmanager
def _locked(lock_dir: Path, user: Path) -> Iterator[None]:
    lock_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    name = hashlib.sha256(str(user).encode()).hexdigest()[:16]
    with open(lock_dir / f"login-{name}.lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _take_out(login: LaidLogin) -> None:
    if not login.keys:
        _remove(login.copy)
        return
    text = _read(login.copy, follow=False)
    if text is None:
        _remove(login.copy)  # not a regular file of a readable size: no login stays in it
        return
    kept = without_login(text.decode("utf-8", "replace"), login.keys)
    if kept is None:
        _remove(login.copy)  # unreadable: never leave a login behind
    else:
        _write(login.copy, kept.encode())


def hand_back(laid: Laid, *, lock_dir: Path) -> list[str]:
    """A login the CLI rewrote goes back to the user's file; every login leaves the copy.
    Returns the user's files that took a rewritten login."""
    taken: list[str] = []
    for login in laid.logins:
        if login.root.is_symlink():
            continue  # never made by magi, and out of the seat's reach (a bind point)
        if login.root.is_dir():
            _unlinked(login.root, login.copy)
        now = None if login.keys else _read(login.copy, follow=False)
        if now is not None and now != login.sent and renewal(login.sent, now):
            with _locked(lock_dir, login.user):
                # A sibling seat (or the user) that handed back first wins: this seat's
                # login is an older refresh of the same one.
                if _read(login.user) == login.sent and login.user.parent.is_dir():
                    _write(login.user, now)
                    taken.append(str(login.user))
        _take_out(login)
    return taken
