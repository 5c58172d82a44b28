"""A seat's mailbox: where ``magi ask`` (the agent) and ``magi answer`` (a person) meet.

It lives in the seat's own state directory (``MAGI_STATE_DIR``, writable inside the jail),
one folder per question thread::

    <state>/ask/<id>/q-1.json   the agent's question (summary, choices)
    <state>/ask/<id>/a-1.json   its answer (how, answer), written once
    <state>/ask/<id>/q-2.json   the agent's reply after a --say, and so on

Every file is written whole (beside, then renamed) and an answer only if none is there yet,
so two people answering at once cannot both win. What the agent writes is read as data,
capped in size; magi records it (``magi.seats.asking``) and the record is what
``magi answer`` trusts for who asked.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
from pathlib import Path
from typing import Any

from magi.core.asking import ID, BadQuestion

ASK = "ask"
FILE_MAX = 64 * 1024  # bytes of one question file: its words are capped far below this


def root(state_dir: Path) -> Path:
    return Path(state_dir) / ASK


def new_id(state_dir: Path) -> str:
    for _ in range(64):
        qid = secrets.token_hex(2)
        if not (root(state_dir) / qid).exists():
            return qid
    raise BadQuestion("no free question id in this seat's mailbox")  # pragma: no cover


def thread(state_dir: Path, qid: str) -> Path:
    if not ID.fullmatch(qid):
        raise BadQuestion(f"{qid!r} is not a question id (four hex digits, e.g. ab12)")
    return root(state_dir) / qid


def turns(state_dir: Path, qid: str) -> int:
    """How many questions the thread holds (its last one is q-<turns>)."""
    d = thread(state_dir, qid)
    n = 0
    while (d / f"q-{n + 1}.json").is_file():
        n += 1
    return n


def write(path: Path, data: dict[str, Any], *, once: bool = False) -> bool:
    """``data`` as JSON at ``path``, whole; with ``once``, False if something is there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _owned(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f)
        if once:
            try:
                os.link(tmp, path)  # fails if the answer is already there: first one wins
            except FileExistsError:
                return False
            return True
        os.replace(tmp, path)
        return True
    finally:
        Path(tmp).unlink(missing_ok=True)


def _owned(d: Path) -> None:
    """The mailbox's folders are the seat's to write, so a link among them could point magi
    (which reads and writes here outside the jail) at files the seat cannot reach."""
    for p in (d.parent, d):
        if p.is_symlink():
            raise BadQuestion(f"{p} is a symbolic link: the mailbox is not read through links")


def read(path: Path) -> dict[str, Any] | None:
    """A mailbox file's JSON object; None if absent; BadQuestion if unreadable, huge or a
    link (never followed)."""
    _owned(path.parent)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise BadQuestion(f"{path}: cannot read ({e.strerror})") from e
    with os.fdopen(fd, "rb") as f:
        raw = f.read(FILE_MAX + 1)
    if len(raw) > FILE_MAX:
        raise BadQuestion(f"{path}: over {FILE_MAX} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise BadQuestion(f"{path}: not a JSON object ({e})") from e
    if not isinstance(data, dict):
        raise BadQuestion(f"{path}: not a JSON object")
    return data


def pending(state_dir: Path) -> list[tuple[str, int]]:
    """(id, turn) of every question whose last turn has no answer yet, in id order."""
    out = []
    base = root(state_dir)
    if base.is_symlink():
        raise BadQuestion(f"{base} is a symbolic link: the mailbox is not read through links")
    for d in sorted(base.iterdir()) if base.is_dir() else []:
        if not ID.fullmatch(d.name) or d.is_symlink() or not d.is_dir():
            continue
        n = turns(state_dir, d.name)
        if n and not (d / f"a-{n}.json").exists():
            out.append((d.name, n))
    return out


def answer_of(state_dir: Path, qid: str, n: int) -> dict[str, Any] | None:
    return read(thread(state_dir, qid) / f"a-{n}.json")


def answer(state_dir: Path, qid: str, n: int, how: str, text: str) -> bool:
    """Answer turn ``n`` of ``qid``; False if it was answered already."""
    return write(thread(state_dir, qid) / f"a-{n}.json", {"how": how, "answer": text}, once=True)
