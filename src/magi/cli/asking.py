"""``magi ask`` (an agent, mid-turn) and ``magi answer`` (a person): a question instead of a guess.

``magi ask`` runs inside a seat's turn (magi puts it on the seat's PATH); the environment
names the seat's mailbox (``MAGI_STATE_DIR``). It writes the question and waits; the answer
comes back on stdout, exit 0. ``magi answer`` lists what agents are waiting on, and answers
one: a choice, or words (``--say``), after which the agent may reply on the same thread
(``magi ask --thread ID``). See ``magi.seats.mailbox`` for where they meet and
``magi.seats.asking`` for what the run records.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from magi.cli.app import app
from magi.errors import StateError, UsageError

if TYPE_CHECKING:
    from magi.model.run import Question
    from magi.state.store import Store

WAIT_S = 0.2  # how often a waiting ``magi ask`` looks for its answer


@app.command()
def ask(
    summary: Annotated[str, typer.Option("--summary", help="What you need to know.")] = "",
    choice: Annotated[
        list[str] | None, typer.Option("--choice", help="An answer to offer (repeatable).")
    ] = None,
    thread: Annotated[
        str | None,
        typer.Option("--thread", help="Reply on this question (after an answer in words)."),
    ] = None,
) -> None:
    """Ask the person running magi instead of guessing (an agent runs this mid-turn).

    Blocks until answered; the answer is printed on stdout. An answer in words may be a
    question back: reply with --thread ID on the same question.
    """
    from magi.core.person.asking import BadQuestion, clean
    from magi.seats import mailbox

    state = os.environ.get("MAGI_STATE_DIR", "")
    if not state or not Path(state).is_dir():
        raise UsageError(
            "magi ask runs inside a seat's turn: MAGI_STATE_DIR (set by magi for every agent "
            "process) names no directory here"
        )
    where = Path(state)
    try:
        asked = clean(summary, list(choice or []))
        if thread is not None:
            box = mailbox.check_id(thread)
            n = mailbox.turns(where, box)
            if n == 0:
                raise BadQuestion(f"no question {box} in this seat's mailbox: ask a new one")
            if mailbox.handed(where, box, n) is None:
                raise BadQuestion(f"question {box} is still waiting for its answer")
            n += 1
        else:
            box, n = mailbox.new_id(), 1
            while mailbox.turns(where, box):
                box = mailbox.new_id()
        body = {"summary": asked.summary, "choices": list(asked.choices)}
        mailbox.write(where, mailbox.ASK, box, name=f"q-{n}.json", data=body)
        typer.echo(
            f"magi: question {box} asked; waiting for an answer (words back may need a "
            f"reply: magi ask --thread {box} --summary ...)",
            err=True,
        )
        while (got := mailbox.handed(where, box, n)) is None:
            time.sleep(WAIT_S)  # a person's pace: the turn's own timeout bounds the wait
    except BadQuestion as e:
        raise UsageError(str(e)) from None
    typer.echo(str(got.get("answer", "")))


@app.command()
def answer(
    question: Annotated[
        str | None, typer.Argument(help="The question's id (magi answer lists them).")
    ] = None,
    choice: Annotated[str | None, typer.Argument(help="One of its choices, or its number.")] = None,
    say: Annotated[
        str | None, typer.Option("--say", help="Answer in words (the agent may reply).")
    ] = None,
    run: Annotated[
        str | None, typer.Option("--run", help="The run, when an id is open in several.")
    ] = None,
) -> None:
    """What agents are waiting to hear from you; with an id, answer it."""
    from magi.core.person.asking import BadQuestion, match, said, where
    from magi.seats import mailbox
    from magi.state.store import Store, magi_home

    store = Store(magi_home())
    waiting = _waiting(store, store.resolve(run) if run else None)
    if question is None:
        if not waiting:
            typer.echo("no agent is waiting on you")
            return
        for run_id, q in waiting:
            last = q.turns[-1]
            typer.echo(f"{q.id}  run {run_id} · {where(q.node, q.label, q.seat)}: {last.summary}")
            for i, c in enumerate(last.choices, start=1):
                typer.echo(f"      {i}. {c}")
            typer.echo(f'      magi answer {q.id} <choice>   or   --say "..."')
        return
    found = [(r, q) for r, q in waiting if q.id == question]
    if not found:
        raise StateError(f"no open question {question}: `magi answer` lists them")
    if len(found) > 1:
        runs = ", ".join(r for r, _ in found)
        raise UsageError(f"question {question} is open in several runs ({runs}): add --run")
    run_id, q = found[0]
    if (choice is None) == (say is None):
        raise UsageError('answer with one of its choices, or with --say "..." (not both)')
    last = q.turns[-1]
    try:
        if choice is not None:
            how, text = "choice", match(choice, tuple(last.choices))
        else:
            how, text = "say", said(say or "")
        given = mailbox.answer(store.run_dir(run_id), q.seat, q.box, len(q.turns), how, text)
    except BadQuestion as e:
        raise UsageError(str(e)) from None
    if not given:
        raise StateError(f"question {q.id} was answered already")
    typer.echo(f"answered {q.id} ({where(q.node, q.label, q.seat)}): {text}")
    if q.status == "waiting":  # the run parked on it: the answer is the seat's next turn
        typer.echo(f"the run is parked on it: magi run --resume {run_id} carries that seat on")


def _waiting(store: Store, only: str | None) -> list[tuple[str, Question]]:
    """(run id, question) of every question a run waits on, newest run first.

    An ``open`` one only while a process holds its run: a run killed or ended cannot hear
    the answer (its resume records it unanswered). A ``waiting`` one whatever holds it: the
    run parked ``asking`` on it, and its resume carries the answer to the seat.
    """
    from magi.state.lock import RunLockedError

    out: list[tuple[str, Question]] = []
    for run_id in [only] if only else store.list_ids():
        try:
            record = store.load(run_id)
        except StateError:
            continue  # one unreadable record hides no other run's question
        out += [(run_id, q) for q in record.questions if q.parked_on]
        open_ = [q for q in record.questions if q.status == "open"]
        if not open_:
            continue
        try:
            store.lock(run_id)
        except RunLockedError:
            out += [(run_id, q) for q in open_]  # held: the run is live
        else:
            store.unlock(run_id)
    return out
