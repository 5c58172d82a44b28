"""A person's ``/magi answer`` comments, delivered to the seats the run waits on.

The App checks one answer comment (a writer's, to a question the record says is waiting)
and dispatches the competition again with its id. GitHub keeps one pending run per
concurrency group, a newer pending one replacing the older: two answers posted while the
runner is busy leave one dispatch, the last. So the resumed run does not read only the
comment it was dispatched for: it delivers every writer's answer on the thread that
answers a question still waiting, in the thread's order, the first answer to each question
winning. A dispatch that was replaced loses nothing; the one that runs carries them all.

Who is a writer: the task job asks GitHub for the permission of every author of a
``/magi answer`` comment (``permissions.json`` beside ``comments.json``; the dispatched
comment the App already checked). Without that file (a workflow from before it), only the
dispatched comment is delivered, as before.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from magi.core.person.asking import BadQuestion, pick
from magi.core.threads.approval import is_bot, may_write
from magi.core.threads.commands import Verb, parse, words_of
from magi.errors import ActionError, AnsweredAlready
from magi.model.run import Run
from magi.seats import mailbox
from magi.state.store import Store

__all__ = ["PERMISSIONS", "Answering", "answer_of", "deliver"]

PERMISSIONS = "permissions.json"  # the task job's: each answer author's permission


@dataclass(frozen=True)
class Answering:
    """Which comment answers the run's question, and the issue's comments (the task job's)."""

    comment: int
    comments_file: Path

    @property
    def permissions_file(self) -> Path:
        return self.comments_file.with_name(PERMISSIONS)


def _json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ActionError(f"cannot read {what} {path.name}: {e}") from None


def _written(row: Mapping[str, Any]) -> datetime | None:
    try:
        return datetime.fromisoformat(str(row.get("created_at")).replace("Z", "+00:00"))
    except ValueError:
        return None


def _words(row: Mapping[str, Any]) -> str | None:
    """The words of the comment's first ``/magi answer``, or None when it holds none."""
    commands = [c for c in parse(str(row.get("body") or "")) if c.verb is Verb.ANSWER]
    return words_of(commands[0]) if commands else None


def answer_of(comments_file: Path, comment: int) -> tuple[str, datetime | None]:
    """The words of the first ``/magi answer`` in comment ``comment`` of the issue (the one
    the App checked), and when GitHub says the comment was written."""
    data = _json(comments_file, "the issue's comments")
    rows = data if isinstance(data, list) else []
    found = [c for c in rows if isinstance(c, dict) and c.get("id") == comment]
    if not found:
        raise ActionError(f"comment {comment} is not among the issue's comments")
    words = _words(found[0])
    if words is None:
        raise ActionError(f"comment {comment} holds no /magi answer")
    return words, _written(found[0])


def _writers(answer: Answering) -> dict[str, str] | None:
    """Each answer author's permission as the task job read it; None without the file."""
    path = answer.permissions_file
    if not path.exists():
        return None
    data = _json(path, "the answer authors' permissions")
    if not isinstance(data, dict):
        raise ActionError(f"{path.name} is not an object of login -> permission")
    return {str(k).lower(): str(v) for k, v in data.items()}


def _by_writers(rows: list[Any], writers: Mapping[str, str], dispatched: int) -> list[int]:
    """The ids of the comments to deliver, in thread order: the dispatched one, and every
    other ``/magi answer`` by a writer who is not a bot."""
    out = []
    for row in rows:
        if not isinstance(row, dict) or not isinstance(row.get("id"), int):
            continue
        if row["id"] == dispatched:
            out.append(row["id"])
            continue
        user = row.get("user")
        if not isinstance(user, dict):
            continue
        login, kind = str(user.get("login", "")), str(user.get("type", "User"))
        if is_bot(login, kind) or not may_write(writers.get(login.lower())):
            continue
        if _words(row) is not None:
            out.append(row["id"])
    return out


def _one(store: Store, record: Run, answer: Answering, comment: int) -> str:
    """Deliver one comment's answer; the question it answered, or raise why it cannot."""
    waiting = [q for q in record.questions if q.parked_on]
    words, written = answer_of(answer.comments_file, comment)
    others = [q.id for q in record.questions]
    try:
        reply = pick([(q.id, tuple(q.turns[-1].choices)) for q in waiting], words, others)
    except BadQuestion as e:
        raise ActionError(f"/magi answer in comment {comment}: {e}") from None
    q = next(q for q in waiting if q.id == reply.qid)
    asked = q.turns[-1].asked_at
    if written is not None and written < asked:
        raise ActionError(
            f"/magi answer in comment {comment} was written before question {q.id} "
            "was asked (an answer to an earlier turn): answer it again"
        )
    run_dir = store.run_dir(record.id)
    try:
        given = mailbox.answer(run_dir, q.seat, q.box, len(q.turns), reply.how, reply.text)
    except BadQuestion as e:
        raise ActionError(f"/magi answer: {e}") from None
    if not given:
        raise AnsweredAlready(
            f"/magi answer in comment {comment}: question {q.id} was answered already"
        )
    return q.id


def deliver(
    store: Store, record: Run, answer: Answering, note: Callable[[str], None] = lambda _: None
) -> list[str]:
    """Write the person's answers where the resumed implement node looks for them: each to
    the question it names, asked before the comment was written, only once. The ids of the
    questions answered; when none is, why the dispatched comment could not be."""
    writers = _writers(answer)
    if writers is None:
        return [_one(store, record, answer, answer.comment)]
    data = _json(answer.comments_file, "the issue's comments")
    rows = data if isinstance(data, list) else []
    answered: list[str] = []
    refused: ActionError | None = None
    for comment in _by_writers(rows, writers, answer.comment):
        try:
            answered.append(_one(store, record, answer, comment))
        except ActionError as e:
            if comment == answer.comment:
                refused = e
            elif not isinstance(e, AnsweredAlready):
                note(f"{e.message}; not delivered")
    if not answered:
        raise refused or ActionError(
            f"/magi answer: comment {answer.comment} is not among the issue's comments"
        )
    if refused is not None:
        note(f"{refused.message}; the thread's other answers were delivered")
    if len(answered) > 1:
        note(f"delivered {len(answered)} answers from the thread: {', '.join(answered)}")
    return answered
