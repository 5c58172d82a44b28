"""The on-disk run store: ``<home>/runs/<id>/run.json`` plus the run's ``artifacts/``.

Every write is atomic (temp file in the same directory, fsync, ``os.replace``, fsync the
directory; a record's later saves write a spare beside it and swap the two names in one
step instead), so a crash or a failed save leaves the previous record whole, never half of
each. Every read fails loudly with the file's path: unreadable, not JSON (line and column),
a schema this magi cannot read (both versions named), or a field that does not validate
(its path named). A record is never guessed into shape.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import random
import re
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

import platformdirs
from pydantic import ValidationError

from magi.errors import StateError
from magi.model.run import RECORD_KINDS, SCHEMA, Record, Run
from magi.state import lock as runlock
from magi.state.migrations import migrate

__all__ = ["RUN_ID", "Store", "magi_home", "new_run_id", "parse_record"]

RUN_ID = re.compile(r"[0-9]{8}-[0-9]{6}-[0-9a-f]{4}")
PARK = "park"  # a request to park the run at its next node boundary
RECORD = "run.json"
ARTIFACTS = "artifacts"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_MAX_NAME = 200  # below every common filesystem's 255-byte name limit, leaving room for temp


def magi_home(environ: Mapping[str, str] | None = None) -> Path:
    """``$MAGI_HOME`` when set and non-empty, else the platform's user data dir for magi."""
    env = os.environ if environ is None else environ
    if env.get("MAGI_HOME"):
        return Path(env["MAGI_HOME"]).expanduser()
    return Path(platformdirs.user_data_dir("magi"))


def new_run_id(now: datetime, rand: Callable[[], int] | random.Random) -> str:
    """``YYYYMMDD-HHMMSS-xxxx``; an aware ``now`` is taken in UTC so ids sort by time."""
    if now.tzinfo is not None:
        now = now.astimezone(UTC)
    n = rand.getrandbits(16) if isinstance(rand, random.Random) else rand()
    if not 0 <= n <= 0xFFFF:
        raise ValueError(f"run id suffix must be in 0..0xffff, got {n}")
    return f"{now:%Y%m%d-%H%M%S}-{n:04x}"


def _fsync_dir(path: Path) -> None:
    # Makes the rename itself durable; Windows cannot open a directory for fsync.
    if sys.platform == "win32":  # pragma: no cover
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` whole, or leave it as it was and no temp file behind."""
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        tmp = None
        _fsync_dir(path.parent)
    except OSError as exc:
        raise StateError(f"cannot write: {exc.strerror or exc}", path=path) from exc
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def _renameat2() -> Callable[[int, bytes, int, bytes, int], int] | None:
    """Linux's ``renameat2``, which swaps two names in one step, or None where it is not."""
    if not sys.platform.startswith("linux"):  # pragma: no cover
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):  # pragma: no cover - a libc older than glibc 2.28
        return None
    fn.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    fn.restype = ctypes.c_int
    return fn


_RENAMEAT2 = _renameat2()
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_SPARE = ".{}.spare"  # the other half of a swap: the record before the last one
_SAVING = threading.Lock()


def _exchange(a: Path, b: Path) -> None:
    """Swap the names ``a`` and ``b`` in one step (both must exist); OSError as ``os`` says."""
    if _RENAMEAT2 is None:  # pragma: no cover
        raise OSError(errno.ENOSYS, "renameat2 is not available here")
    if _RENAMEAT2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


_CANNOT_SWAP = frozenset({errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV})


def _write_swapped(path: Path, text: str) -> bool:
    """Replace ``path`` with ``text`` whole by writing its spare and swapping the two names.

    What ``_write_atomic`` does without making a new file per write: on this VM a new file is
    0.2 to 0.4 ms of system time, the most of a record save, and a run saves its record
    about 75 times. A kill mid-write leaves a half-written spare and ``path`` whole; the swap
    is one step (``RENAME_EXCHANGE``), after which the spare holds the previous record, to
    be overwritten next time (the first save, with nothing to swap with, renames it into
    place). False when a swap is not possible here (a file system or kernel without it, a
    link planted as the spare): the caller writes the usual way. A failed write leaves
    ``path`` as it was and no spare.
    """
    if _RENAMEAT2 is None:  # pragma: no cover
        return False
    spare = path.with_name(_SPARE.format(path.name))
    try:
        # Not a link followed, nor a FIFO waited on: the usual way replaces what lies there.
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK
        fd = os.open(spare, flags, 0o600)
    except OSError:
        return False
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # pragma: no cover - a device node
        os.close(fd)
        return False
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        try:
            _exchange(spare, path)
        except FileNotFoundError:  # the first save: nothing to swap with yet
            os.replace(spare, path)
            _fsync_dir(path.parent)
        return True
    except OSError as exc:
        spare.unlink(missing_ok=True)
        if exc.errno in _CANNOT_SWAP:
            return False
        raise StateError(f"cannot write: {exc.strerror or exc}", path=path) from exc


def _write_durable(path: Path, text: str, *, sync_dir: bool = True) -> None:
    """``text`` at ``path``, on disk, without the beside-then-rename of ``_write_atomic``.

    For an artifact: it is written before anything names it (a turn's record is saved after
    its artifacts), and a kill mid-write leaves a file no record names, which the re-asked
    turn writes again under the same name. A link planted there is replaced, not followed.
    """
    try:
        if path.is_symlink():
            path.unlink()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if sync_dir:
            _fsync_dir(path.parent)
    except OSError as exc:
        raise StateError(f"cannot write: {exc.strerror or exc}", path=path) from exc


def _field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(record)"


def _describe(err: ValidationError, limit: int = 5) -> str:
    errors = err.errors(include_url=False)
    parts = [f"{_field_path(e['loc'])}: {e['msg']}" for e in errors[:limit]]
    if len(errors) > limit:
        parts.append(f"and {len(errors) - limit} more")
    return "; ".join(parts)


def _invalid(err: ValidationError, written: object) -> str:
    """Why a record does not validate; a stored config that no longer does names both schemas.

    The config a run started with is part of its record: a magi whose config schema moved
    on cannot resume it as if nothing happened, and a raw pydantic dump helps nobody.
    """
    if any(e["loc"][:1] == ("config",) for e in err.errors(include_url=False)):
        return (
            f"the config recorded with this run no longer validates ({_describe(err)}); "
            f"the record was written by schema {written}, this magi reads schema {SCHEMA}"
        )
    return f"invalid record: {_describe(err)}"


def parse_record(text: str, *, path: Path, run_id: str | None = None) -> Record:
    """A ``run.json`` text as a record of its kind, migrated to ``SCHEMA``; ``StateError``
    naming ``path`` otherwise. ``run_id``: the id the record must carry, where it lives.

    The one reading of a record: ``Store.load`` uses it for the runner's disk, the App for
    the copy in ``refs/magi/runs/<id>`` (``path`` then names the ref).
    """
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StateError(
            f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", path=path
        ) from None
    if not isinstance(record, dict):
        raise StateError(f"expected a JSON object, found {type(record).__name__}", path=path)
    written = record.get("schema")
    try:
        record = migrate(record)
    except StateError as exc:
        raise StateError(exc.message, path=path) from None
    kind = record.get("kind", "competition")
    model = RECORD_KINDS.get(kind) if isinstance(kind, str) else None
    if model is None:
        known = ", ".join(sorted(RECORD_KINDS))
        raise StateError(f"unknown record kind {kind!r} (this magi knows {known})", path=path)
    try:
        run = model.model_validate(record)
    except ValidationError as exc:
        raise StateError(_invalid(exc, written), path=path) from None
    if run_id is not None and run.id != run_id:
        # A copied or renamed directory: saving would write one run's record into another's.
        raise StateError(f"record says id {run.id}, but lives under {run_id}", path=path)
    return run


class Store:
    """Runs under ``home/runs``, one directory per run id."""

    def __init__(
        self,
        home: Path,
        *,
        remote_park: Callable[[str], str | None] | None = None,
        runs: str = "runs",
    ) -> None:
        self.home = Path(home)
        # ``runs``: the folder of ``home`` the records live in. A judge's seat job keeps the
        # panels it is sent (``magi.report.before_tally.panel_copy``) apart from whole runs,
        # in ``panels``, under the same home (which every seat's jail hides).
        self._runs = runs
        # Where a park is asked for from afar (a runner's `/magi stop`, through the App:
        # ``magi.action.agents_job.park``), asked after this machine's own request file.
        self.remote_park = remote_park
        self._dirs: dict[str, Path] = {}  # run id -> its folder, once the id was checked
        self._folders: set[Path] = set()  # artifact folders made (or found) already

    @property
    def runs_dir(self) -> Path:
        return self.home / self._runs

    def run_dir(self, run_id: str) -> Path:
        # The id becomes a path component: only the documented shape may, so no id can
        # name a parent directory or another run's files.
        if (known := self._dirs.get(run_id)) is not None:
            return known  # a run saves its record about 60 times, each asking this thrice
        if not RUN_ID.fullmatch(run_id):
            raise StateError(f"{run_id!r} is not a run id (YYYYMMDD-HHMMSS-xxxx)")
        return self._dirs.setdefault(run_id, self.runs_dir / run_id)

    def create(self, run: Record) -> Path:
        """Make the run's directory and first record; an existing id is refused."""
        d = self.run_dir(run.id)
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        try:
            d.mkdir()
        except FileExistsError:
            raise StateError(f"run {run.id} already exists", path=d) from None
        try:
            runlock.acquire(d)
            self.save(run)
        except BaseException:
            # A directory without a record is not a run; leave nothing for list_ids to trip on.
            runlock.release(d)
            (d / runlock.LOCK).unlink(missing_ok=True)
            d.rmdir()
            raise
        return d

    def lock(self, run_id: str) -> None:
        """Own the run for the rest of this process; RunLockedError names a live holder."""
        d = self.run_dir(run_id)
        if not d.is_dir():
            raise StateError(f"no run {run_id}", path=d)
        runlock.acquire(d)

    def unlock(self, run_id: str) -> None:
        runlock.release(self.run_dir(run_id))

    # A park request is a file in the run's directory: another process (``magi park``) or
    # the run's own signal watcher writes it, the run reads it at each node boundary.
    def request_park(self, run_id: str, why: str) -> None:
        d = self.run_dir(run_id)
        if not d.is_dir():
            raise StateError(f"no run {run_id}", path=d)
        _write_atomic(d / PARK, why.strip() + "\n")

    def park_request(self, run_id: str) -> str | None:
        """Why a park was asked for, or None: ``magi park`` or SIGTERM under ``--park`` here,
        else ``remote_park`` (asked once per call: at a node boundary)."""
        try:
            return (self.run_dir(run_id) / PARK).read_text(encoding="utf-8").strip() or "asked"
        except OSError:
            pass
        return self.remote_park(run_id) if self.remote_park is not None else None

    def clear_park(self, run_id: str) -> None:
        (self.run_dir(run_id) / PARK).unlink(missing_ok=True)

    def save(self, run: Record) -> None:
        """Write ``run.json`` atomically; the run must have been created."""
        d = self.run_dir(run.id)
        path = d / RECORD
        if run.schema_version != SCHEMA:
            raise StateError(
                f"refusing to write a record stamped schema {run.schema_version};"
                f" this magi writes schema {SCHEMA}",
                path=path,
            )
        if not d.is_dir():
            raise StateError(f"no run {run.id}; create it before saving", path=d)
        # One writer per run: a second live process is refused, and a save from a process
        # whose lock was pulled from under it is refused before it overwrites a newer record.
        runlock.check(d)
        # Serialize before touching the disk: a model that cannot be dumped writes nothing.
        text = run.model_dump_json(by_alias=True, indent=2) + "\n"
        with _SAVING:  # two threads never fill one spare at once
            if not _write_swapped(path, text):
                _write_atomic(path, text)

    def load(self, run_id: str) -> Record:
        """The record of any kind (a competition ``Run``, a council, ...)."""
        path = self.run_dir(run_id) / RECORD
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise StateError(f"no run {run_id}", path=path) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise StateError(f"cannot read: {exc}", path=path) from exc
        return parse_record(text, path=path, run_id=run_id)

    def load_run(self, run_id: str) -> Run:
        """A competition record; another kind is refused by name."""
        run = self.load(run_id)
        if not isinstance(run, Run):
            raise StateError(f"run {run_id} is a {run.kind}, not a competition")
        return run

    def list_ids(self) -> list[str]:
        """Ids of runs that have a record, newest first (ids begin with their time)."""
        if not self.runs_dir.is_dir():
            return []
        ids = [
            p.name
            for p in self.runs_dir.iterdir()
            if RUN_ID.fullmatch(p.name) and (p / RECORD).is_file()
        ]
        return sorted(ids, reverse=True)

    def latest(self) -> str | None:
        ids = self.list_ids()
        return ids[0] if ids else None

    def resolve(self, ref: str) -> str:
        """A full id, a unique prefix of the 4-hex suffix, or a unique prefix of the id.

        A short hex ref is read as a suffix first (``49ad`` is how people name runs); only
        when no suffix matches is it tried as the start of the id (``20260912-05``).
        """
        ref = ref.strip()
        if not ref:
            raise StateError("empty run reference")
        ids = self.list_ids()
        if ref in ids:
            return ref
        matches: list[str] = []
        if re.fullmatch(r"[0-9a-f]{1,4}", ref):
            matches = [i for i in ids if i[-4:].startswith(ref)]
        if not matches:
            matches = [i for i in ids if i.startswith(ref)]
        if not matches:
            raise StateError(f"no run matches {ref!r} in {self.runs_dir}")
        if len(matches) > 1:
            shown = ", ".join(matches[:10]) + (" ..." if len(matches) > 10 else "")
            raise StateError(f"{ref!r} matches {len(matches)} runs: {shown}; give more of the id")
        return matches[0]

    def write_artifact(self, run_id: str, name: str, text: str, *, sync_dir: bool = True) -> str:
        """Store ``text`` as ``artifacts/<sanitized name>``; return that path, run-relative.
        ``sync_dir=False``: the folder is made durable by a later ``write_artifacts``, before
        any record names this one (a turn's prompt: by its reply's)."""
        return self.write_artifacts(run_id, {name: text}, sync_dir=sync_dir)[0]

    def write_artifacts(
        self, run_id: str, texts: Mapping[str, str], *, sync_dir: bool = True
    ) -> list[str]:
        """``write_artifact`` of each, the folder made durable once for all of them (a
        turn's reply and raw output: one ``fsync`` of the folder, not one each)."""
        d = self.run_dir(run_id)
        target = d / ARTIFACTS
        if target not in self._folders:  # asked once: a run writes some forty artifacts
            if not d.is_dir():
                raise StateError(f"no run {run_id}", path=d)
            target.mkdir(exist_ok=True)
            self._folders.add(target)
        out = []
        for name, text in texts.items():
            safe = _sanitize(name)
            _write_durable(target / safe, text, sync_dir=False)
            out.append(f"{ARTIFACTS}/{safe}")
        if not sync_dir:
            return out
        try:
            _fsync_dir(target)
        except OSError as exc:
            raise StateError(f"cannot write: {exc.strerror or exc}", path=target) from exc
        return out

    def read_artifact(self, run_id: str, rel: str) -> str:
        d = self.run_dir(run_id)
        head, _, name = rel.partition("/")
        # Only what write_artifact can return is readable: no '..', no absolute paths.
        if head != ARTIFACTS or not name or _UNSAFE.search(name) or name.startswith("."):
            raise StateError(f"{rel!r} is not an artifact path", path=d)
        path = d / ARTIFACTS / name
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise StateError("no such artifact", path=path) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise StateError(f"cannot read: {exc}", path=path) from exc


def _sanitize(name: str) -> str:
    # Leading dots go: '..' would name the parent, and '.x' would hide among temp files.
    safe = _UNSAFE.sub("_", name).lstrip(".")[:_MAX_NAME]
    if not safe:
        raise StateError(f"artifact name {name!r} has no usable characters")
    return safe
