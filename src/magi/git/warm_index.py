"""A clone's index made ready for the hand-back while its seat works.

git tells a file from its index entry by stat data alone, except when the file is not older
than the index itself: such an entry is "racily clean", and git reads the file to be sure
(https://git-scm.com/docs/racy-git, to the whole second where git is built without
nanosecond stamps, as distributions build it). A clone's checkout writes its files and its
index in the same second, so the hand-back's ``git add -A`` read every file of the tree:
on 2,000 files 10 to 15 ms, on the way from the slowest seat's end to the wave's.

So once that second is over, while the seat still works, magi refreshes a copy of the
clone's index. The copy keeps the index's own time, so git reads the files of that second
there (a file the seat rewrote in it, same size, has the same stat at whole seconds), and
is then stamped with the time the refresh began: a file the seat wrote while the refresh
read it is not older than the copy, and is read again. The hand-back's ``add -A`` then
reads only those and the files whose stat changed.

What the seat can reach is never trusted or touched:

* the copy lives beside the clone, outside the tree a jailed seat may write;
* its refresh runs git with a git directory of magi's own, holding the clone's config as
  it was before the turn: the clone's own config may meanwhile name a filter driver, a
  program git would run to read a file (the guard restores it only after the turn);
* the seat's own index is only read, once: the copy is used only if, after the turn,
  the clone's index is still that very file (a seat that ran git made an index of its
  own, and it is used as ever). The copy, brought up to date by ``add -A``, then becomes
  the clone's index, which is what ``add -A`` would have left there. The hand-back does
  not use it when a ``.gitattributes`` that applies to what it holds changed
  (``attributes_changed``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from magi.errors import RepoError
from magi.git.repo import AttributeFiles, Git

# The kernel stamps files from a clock that may lag the one ``time.time`` reads by a tick.
_MARGIN_S = 0.02
_clock = time.time  # the time a refresh begins at (a test sets it)


class Timer(Protocol):
    def start(self) -> None: ...
    def cancel(self) -> None: ...


def _timer(delay: float, fn: Callable[[], None]) -> Timer:
    t = threading.Timer(delay, fn)
    t.daemon = True
    return t


def _identity(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


_SUFFIX = ".warm"


def place(tree: Path) -> Path:
    """Where a clone's copy is kept: ``.<label>.warm`` beside it, which fold removes."""
    return Path(tree).parent / f".{Path(tree).name}{_SUFFIX}"


def leftovers(root: Path) -> list[Path]:
    """The copies under a run's folder of trees (a kill's, or a turn's that never ended)."""
    found = sorted(Path(root).glob(f".*{_SUFFIX}")) if Path(root).is_dir() else []
    return [p for p in found if p.is_dir() or p.is_symlink()]


class WarmIndex:
    """The copy of one clone's index for one turn: ``start`` before it, ``take`` after."""

    def __init__(self, git: Git, tree: Path, config: bytes | None) -> None:
        self._git = git
        self._tree = Path(tree)
        self._real = self._tree / ".git" / "index"
        self._dir = place(self._tree)
        self._config = config or b""
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._state = "idle"  # idle, waiting, refreshing, ready, off
        self._was: tuple[int, ...] | None = None
        self._timer: Timer | None = None
        self._attributes: AttributeFiles | None = None

    @property
    def index(self) -> Path:
        return self._dir / "index"

    def start(self, timer: Callable[[float, Callable[[], None]], Timer] | None = None) -> None:
        """Note the clone's index as it is, and copy and refresh it once its second is over
        (all of it then, on the timer's thread: nothing here is on the seat's way)."""
        try:
            st = self._real.lstat()
        except OSError:
            self._off()
            return
        if not stat.S_ISREG(st.st_mode):
            self._off()
            return
        self._was = _identity(st)
        delay = max(0.0, int(st.st_mtime) + 1 + _MARGIN_S - time.time())
        later = (timer or _timer)(delay, self._refresh)
        with self._lock:
            self._state = "waiting"
            self._timer = later
        later.start()  # not under the lock: a timer may run what it is given at once

    def _refresh(self) -> None:
        with self._lock:
            if self._state != "waiting":
                return
            self._state = "refreshing"
        ok = False
        try:
            self._copy()
            began = _clock() - _MARGIN_S
            self._git.refresh_index(self._tree, index=self.index, git_dir=self._dir / "git")
            # Stamped as of the refresh's start: a file it read in that second or later may
            # have been rewritten after it read it (same size, same second), so git reads
            # those again at the hand-back; what it stamped older was read after its last
            # write, and any write since has changed its stamp.
            os.utime(self.index, (began, began))
            self._attributes = self._git.attribute_files(
                self._tree, index=self.index, git_dir=self._dir / "git"
            )
            ok = True
        except (OSError, RepoError, ValueError):
            pass  # no copy: the hand-back stages into the clone's own index, as ever
        finally:
            with self._lock:
                self._state = "ready" if ok else "off"
            self._done.set()

    def _copy(self) -> None:
        """The copy, and the git directory its refresh runs with. The index is copied only
        if it is still the file noted before the turn (git replaces an index it writes, so
        an open one is one whole version of it)."""
        remove(self._dir)  # what a killed run left
        repo = self._dir / "git"
        for sub in ("objects", "refs"):
            (repo / sub).mkdir(parents=True)
        (repo / "HEAD").write_bytes(b"ref: refs/heads/magi-warm\n")
        (repo / "config").write_bytes(self._config)
        # No link followed, no wait on a fifo put in its place: whatever is not that very
        # file is refused by its identity.
        fd = os.open(self._real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as src:
            st = os.fstat(src.fileno())
            if not stat.S_ISREG(st.st_mode) or _identity(st) != self._was:
                raise OSError("the seat's git wrote its own index")
            self.index.write_bytes(src.read(st.st_size))
        # The copy keeps the index's own time: git judges an entry racy against the time of
        # the index it reads, and a copy stamped now would vouch, unread, for a file the seat
        # rewrote (same size) in the very second the index was written.
        os.utime(self.index, ns=(st.st_atime_ns, st.st_mtime_ns))

    def take(self) -> Path | None:
        """After the turn: the refreshed copy, if the clone's index is still the one it was
        copied from; else None (and the copy is gone). A refresh under way is waited for."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            if self._state == "waiting":
                self._state = "off"
            refreshing = self._state == "refreshing"
        if refreshing:
            self._done.wait()
        try:
            same = _identity(self._real.lstat()) == self._was
        except OSError:
            same = False
        if self._state == "ready" and same:
            return self.index
        self.drop()
        return None

    def attributes_changed(self) -> bool:
        """Whether the seat added, changed or removed a ``.gitattributes`` that applies to a
        file the copy holds (one in a folder of a tracked file, or above it): git would
        then stage from the clone's own index what it reads again under the new rules,
        where the copy holds what the refresh read under the old. Ignored or not."""
        known = self._attributes
        if known is None:
            return True
        for d in known.folders:
            path = self._tree / d / ".gitattributes"
            if str(Path(d) / ".gitattributes") not in known.tracked and os.path.lexists(path):
                return True
        if not known.tracked:
            return False
        return self._git.tracked_changed(self._tree, index=self.index, paths=known.tracked)

    def install(self) -> None:
        """Make the copy the clone's index (after ``add -A`` brought it up to date). Where
        it cannot be moved or copied there, the clone's index is made from its HEAD, which
        is what the copy staged."""
        try:
            try:
                os.replace(self.index, self._real)
            except OSError:
                shutil.copyfile(self.index, self._real)  # another filesystem: a copy
        except OSError:
            self._git.run("reset", "-q", cwd=self._tree)
        self.drop()

    def drop(self) -> None:
        """Cancel what has not run, wait for what runs, and remove the copy."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            if self._state in ("waiting", "idle"):
                self._state = "off"
            refreshing = self._state == "refreshing"
        if refreshing:
            self._done.wait()
        remove(self._dir)

    def _off(self) -> None:
        with self._lock:
            self._state = "off"
        remove(self._dir)


def remove(path: Path) -> None:
    """A copy and its git directory; a link in its place only unlinked."""
    with contextlib.suppress(OSError):
        if path.is_symlink():
            path.unlink()
    shutil.rmtree(path, ignore_errors=True)
