"""Where ``magi ask`` (the agent) and ``magi answer`` (a person) meet, and who may write what.

Two folders per seat, one thread of files per question::

    <run>/seats/<seat>/ask/<box>/q-1.json      the agent's question (its state dir: writable
    <run>/seats/<seat>/ask/<box>/a-1.json      to it), and the answer magi hands it back
    <run>/answers/<seat>/<box>/a-1.json        a person's answer (``magi answer``): outside
                                               every jail, so no agent can forge one

A thread's next question is ``q-2.json``, and so on. The seat owns its mailbox, so magi,
which reads and writes there from outside the jail, opens every level with ``O_NOFOLLOW``
through directory descriptors, takes only regular files of bounded size, and never waits
on one (``O_NONBLOCK``: a FIFO planted there answers nothing and blocks nothing). An answer
is written once: two people answering at once cannot both win.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from magi.core.person.asking import ID, BadQuestion

ASK = "ask"
ANSWERS = "answers"
FILE_MAX = 64 * 1024  # bytes of one question file: its words are capped far below this
BOXES_MAX = 64  # threads looked at per seat: a run asks a few (``[ask] max_per_run``)
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def new_id() -> str:
    return secrets.token_hex(2)


def check_id(box: str) -> str:
    if not ID.fullmatch(box):
        raise BadQuestion(f"{box!r} is not a question id (four hex digits, e.g. ab12)")
    return box


@contextlib.contextmanager
def _opened(base: Path, *parts: str, create: bool = False) -> Iterator[int]:
    """A descriptor of ``base/parts...``, no level of ``parts`` followed if it is a link."""
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o700, dir_fd=fd)
            try:
                nxt = os.open(part, _DIR, dir_fd=fd)
            except OSError as e:
                raise BadQuestion(f"{base}/{part}: not a folder magi reads ({e.strerror})") from e
            os.close(fd)
            fd, base = nxt, base / part
        yield fd
    finally:
        os.close(fd)


def read(base: Path, *parts: str, name: str) -> dict[str, Any] | None:
    """The JSON object in ``base/parts.../name``; None if there is none; BadQuestion if it
    is a link, not a regular file, over ``FILE_MAX`` or not a JSON object."""
    where = Path(base, *parts, name)
    try:
        with _opened(base, *parts) as d:
            try:
                fd = os.open(name, _FILE, dir_fd=d)
            except FileNotFoundError:
                return None
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    raise BadQuestion(f"{where}: not a regular file")
                raw = f.read(FILE_MAX + 1)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise BadQuestion(f"{where}: cannot read ({e.strerror})") from e
    if len(raw) > FILE_MAX:
        raise BadQuestion(f"{where}: over {FILE_MAX} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise BadQuestion(f"{where}: not a JSON object ({e})") from e
    if not isinstance(data, dict):
        raise BadQuestion(f"{where}: not a JSON object")
    return data


def write(base: Path, *parts: str, name: str, data: dict[str, Any], once: bool = False) -> bool:
    """``data`` as JSON at ``base/parts.../name``, whole (beside, then linked or renamed);
    with ``once``, False if something is there already."""
    body = json.dumps(data).encode("utf-8")
    try:
        with _opened(base, *parts, create=True) as d:
            tmp = f".{name}.{secrets.token_hex(4)}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=d)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(body)
                if once:
                    try:
                        os.link(tmp, name, src_dir_fd=d, dst_dir_fd=d, follow_symlinks=False)
                    except FileExistsError:
                        return False
                    return True
                os.replace(tmp, name, src_dir_fd=d, dst_dir_fd=d)
                return True
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp, dir_fd=d)
    except OSError as e:
        raise BadQuestion(f"{Path(base, *parts, name)}: cannot write ({e.strerror})") from e


def turns(state_dir: Path, box: str) -> int:
    """How many questions the thread holds (its last one is q-<turns>)."""
    try:
        with _opened(Path(state_dir), ASK, check_id(box)) as d:
            names = set(os.listdir(d))
    except BadQuestion:
        return 0
    n = 0
    while f"q-{n + 1}.json" in names:
        n += 1
    return n


def pending(state_dir: Path) -> list[tuple[str, int]]:
    """(box, turn) of every question whose last turn has no answer handed back yet."""
    out = []
    try:
        with _opened(Path(state_dir), ASK) as d:
            boxes = sorted(n for n in os.listdir(d) if ID.fullmatch(n))[:BOXES_MAX]
    except BadQuestion:
        return []  # no mailbox (yet), or one that is not a folder: nothing asked
    for box in boxes:
        n = turns(state_dir, box)
        if n:
            with contextlib.suppress(BadQuestion), _opened(Path(state_dir), ASK, box) as d:
                if f"a-{n}.json" not in os.listdir(d):
                    out.append((box, n))
    return out


def question(state_dir: Path, box: str, n: int) -> dict[str, Any] | None:
    return read(Path(state_dir), ASK, check_id(box), name=f"q-{n}.json")


def handed(state_dir: Path, box: str, n: int) -> dict[str, Any] | None:
    """The answer the agent's ``magi ask`` reads (and may have written itself)."""
    return read(Path(state_dir), ASK, check_id(box), name=f"a-{n}.json")


def hand(state_dir: Path, box: str, n: int, how: str, text: str) -> bool:
    """Give the agent its answer (what ``magi ask`` prints); False if one is there."""
    data = {"how": how, "answer": text}
    return write(Path(state_dir), ASK, check_id(box), name=f"a-{n}.json", data=data, once=True)


def answered(run_dir: Path, seat: str, box: str, n: int) -> dict[str, Any] | None:
    """A person's answer to turn ``n`` of ``box``, as ``magi answer`` wrote it."""
    base = Path(run_dir)
    return read(base, ANSWERS, seat, check_id(box), name=f"a-{n}.json")


def answer(run_dir: Path, seat: str, box: str, n: int, how: str, text: str) -> bool:
    """``magi answer``: a person's answer to turn ``n``; False if it was answered already."""
    data = {"how": how, "answer": text}
    base = Path(run_dir)
    return write(base, ANSWERS, seat, check_id(box), name=f"a-{n}.json", data=data, once=True)
