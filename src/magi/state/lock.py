"""One process per run: an exclusive OS lock on the run directory, held for the process's life.

Two magi processes on one run fight over the same worktrees and the last save wins, so a
``ready`` record can come back as ``implementing`` (issue 7). The lock is ``flock(2)`` on
``<run>/lock``: the kernel frees it when the holder exits, however it exits (kill -9
included), so a stale lock never needs breaking by hand. Who holds it (pid, host, when it
was taken, the command) is written into the same file, for the refusal to name.

Within one process the lock is re-entrant: every ``Store`` of the process shares the
registry below, so a test (or the App) that resumes a run it started is not refused by
itself. ``still_held`` is what every save checks: a run directory deleted and recreated
under a live run holds a different file, and this process no longer owns what it writes.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from magi.errors import StateError

LOCK = "lock"


class RunLockedError(StateError):
    """Another live process holds the run; carries what it wrote about itself."""

    def __init__(self, run_dir: Path, holder: dict[str, object]) -> None:
        who = describe(holder)
        super().__init__(
            f"run {run_dir.name} is in use by {who}; wait for it to end, or end that process "
            "(a killed process frees the run)",
            path=run_dir,
        )
        self.holder = holder


def describe(holder: dict[str, object]) -> str:
    if not holder:
        return "another process (it has not written who it is yet)"
    pid, host, since = holder.get("pid", "?"), holder.get("host", "?"), holder.get("since", "?")
    return f"pid {pid} on {host} (since {since})"


@dataclass
class RunLock:
    """A held lock: the open file that carries it, and the inode it was taken on."""

    path: Path
    fd: int
    inode: tuple[int, int]

    def still_held(self) -> bool:
        """The lock file at ``path`` is still the one this process locked."""
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self.inode

    def release(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


_held: dict[Path, RunLock] = {}
_guard = threading.Lock()


def read_holder(run_dir: Path) -> dict[str, object]:
    """What the current (or last) holder wrote; empty when nothing readable is there."""
    try:
        data = json.loads((run_dir / LOCK).read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def acquire(run_dir: Path) -> RunLock:
    """Take (or, in this process, re-use) the lock of ``run_dir``; refuse if another holds it."""
    key = Path(run_dir).resolve()
    with _guard:
        have = _held.get(key)
        if have is not None and have.still_held():
            return have
        if have is not None:
            have.release()
            del _held[key]
        path = key / LOCK
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise StateError(f"cannot open the run lock: {exc.strerror}", path=path) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RunLockedError(key, read_holder(key)) from None
        st = os.fstat(fd)
        _write_holder(fd)
        lock = RunLock(path, fd, (st.st_dev, st.st_ino))
        _held[key] = lock
        return lock


def check(run_dir: Path) -> None:
    """Before a write: this process holds the lock of ``run_dir`` (taking it if free)."""
    key = Path(run_dir).resolve()
    with _guard:
        have = _held.get(key)
    if have is None:
        acquire(key)
    elif not have.still_held():
        raise StateError(
            "the run's lock file was replaced under this process; another process may own the "
            "run now, so this one stops writing it",
            path=key,
        )


def release(run_dir: Path) -> None:
    """Give the run up (the end of a command, or a test); a no-op if not held."""
    key = Path(run_dir).resolve()
    with _guard:
        have = _held.pop(key, None)
    if have is not None:
        have.release()


def holds(run_dir: Path) -> bool:
    key = Path(run_dir).resolve()
    with _guard:
        have = _held.get(key)
    return have is not None and have.still_held()


def _write_holder(fd: int) -> None:
    info = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "since": datetime.now(UTC).isoformat(timespec="seconds"),
        "argv": sys.argv[:8],
    }
    data = (json.dumps(info) + "\n").encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)
