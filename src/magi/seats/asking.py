"""Questions asked during a seat's turn: recorded as they come, answered, bounded.

While a seat's turn runs, ``Listening`` looks into its mailbox (``magi.seats.mailbox``)
every ``POLL_S``. A new question is cleaned (one line, capped, secrets redacted), recorded
in ``Record.questions`` against the seat, the node and the candidate's label, saved, and
told to ``[notify] command``; the agent's ``magi ask`` then waits. A person's answer
(``magi answer``, written where no seat can write) is recorded and handed to the agent.

Where nobody can answer mid-turn (a runner's agents job holds no credential and reaches no
person), an implementer's question is recorded ``waiting`` and the agent is told ``PARK``:
end the turn now, the answer comes as the next one. The implement node then parks the run
``asking`` (``magi.graph.implement``), publish posts the question, and a writer's
``/magi answer`` resumes that seat alone. A question past ``[ask] max_per_run``, one asked
on a runner by a seat whose node cannot be continued later (a judge owes its ranking in the
turn it was asked), or one magi cannot read, is answered at once with ``DECIDE`` and
counted, not recorded one by one. A question still open when the turn ends is recorded
``unanswered``. Nothing here may stop the turn's own ending: a failure is said once in the
record and the listening goes on.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import Literal

from magi.core.person.asking import DECIDE, ENDED, PARK, BadQuestion, clean, said, where
from magi.core.text.sanitize import redact_secrets
from magi.model.run import Question, QuestionTurn
from magi.sandbox.notify import send
from magi.seats import mailbox
from magi.seats.context import SeatContext, utcnow

POLL_S = 0.25  # how soon a question is recorded, and an answer seen
JOIN_S = 5.0  # the listener's last look, at most; the turn's ending never waits longer
# Nodes whose seat can be continued after the run parks on its question: an implementer's
# next turn carries the answer into the same clone and conversation.
PARKS = frozenset({"implement"})


def on_runner(sctx: SeatContext) -> bool:
    """Nobody can answer mid-turn here: a runner's agents job reaches no person."""
    return sctx.environ.get("GITHUB_ACTIONS") == "true"


def person_answer(
    run_dir: Path, seat: str, box: str, n: int
) -> tuple[Literal["choice", "say"], str] | None:
    """A person's answer to turn ``n`` of a question, as ``magi answer`` wrote it (or the
    runner, from ``/magi answer``); None while there is none, BadQuestion if unreadable."""
    got = mailbox.answered(run_dir, seat, box, n)
    if got is None:
        return None
    how: Literal["choice", "say"] = "choice" if got.get("how") == "choice" else "say"
    return how, said(str(got.get("answer", "")))


class Listening:
    """The mailbox of one seat turn, looked into on a thread of its own until ``stop``."""

    def __init__(
        self, sctx: SeatContext, *, seat: str, node: str, turn: int, label: str, state: Path
    ) -> None:
        self.sctx, self.seat, self.node, self.turn, self.label = sctx, seat, node, turn, label
        self.state = state
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"ask-{seat}", daemon=True)
        self._seen: set[tuple[str, int]] = set()  # (box, turn) taken, decided or refused
        self._said: set[str] = set()  # what went wrong, said once each
        self.decided = 0  # questions answered "decide yourself" without a record of their own

    def start(self) -> Listening:
        self._thread.start()
        return self

    def stop(self) -> None:
        """The last look; open questions become ``unanswered``. Never raises."""
        self._stop.set()
        self._thread.join(JOIN_S)
        self._look()
        with self.sctx.lock:
            left = [q for q in self._mine() if q.status == "open"]
            for q in left:
                q.status = "unanswered"
        for q in left:
            # A ``magi ask`` that outlived its turn (an unjailed agent's orphan; a jail's
            # die with it) hears that nobody will answer, rather than waiting for ever.
            with contextlib.suppress(BadQuestion):
                mailbox.hand(self.state, q.box, len(q.turns), "ended", ENDED)
        notes = []
        if left:
            notes.append(
                f"its turn ended with question(s) {', '.join(q.id for q in left)} unanswered"
            )
        if self.decided:
            notes.append(f"{self.decided} question(s) answered 'decide yourself' ({self._why()})")
        if notes:
            self.sctx.event(self.node, f"{self.seat}: " + "; ".join(notes), "warn")
            self.sctx.save()

    def _why(self) -> str:
        limit = self.sctx.config.ask.max_per_run
        if on_runner(self.sctx):
            return f"on a runner only an implementer's question parks the run; {self.node} cannot"
        return f"past [ask] max_per_run = {limit}, or not readable"

    def _loop(self) -> None:
        while not self._stop.wait(POLL_S):
            self._look()

    def _look(self) -> None:
        try:
            self.sweep()
        except Exception as e:  # said in the record: the turn ends as it would
            self._once(f"the mailbox could not be read: {type(e).__name__}: {e}")

    def _once(self, what: str) -> None:
        if what in self._said or len(self._said) > 5:
            return
        self._said.add(what)
        self.sctx.event(self.node, f"{self.seat}: {what}", "warn")
        self.sctx.save()

    def _mine(self) -> list[Question]:
        return [q for q in self.sctx.record.questions if q.seat == self.seat]

    def sweep(self) -> None:
        """Record what is new: answers to recorded questions, then new questions."""
        self._answers()
        for box, n in mailbox.pending(self.state):
            if (box, n) in self._seen:
                continue
            self._seen.add((box, n))
            try:
                self._asked(box, n)
            except BadQuestion as e:
                self._decide(box, n)
                self._once(f"a question was not taken: {e}")

    def _answers(self) -> None:
        with self.sctx.lock:
            waiting = [(q, len(q.turns)) for q in self._mine() if q.status == "open"]
        for q, n in waiting:
            try:  # outside the lock
                got = person_answer(self.sctx.run_dir, self.seat, q.box, n)
            except BadQuestion:
                continue  # magi answer writes no empty answer; one by hand is not taken
            if got is None:
                continue
            how, text = got
            with self.sctx.lock:
                last = q.turns[n - 1]
                if last.how is not None:
                    continue
                last.how, last.answer, last.answered_at = how, text, utcnow()
                q.status = "answered"
            mailbox.hand(self.state, q.box, n, how, text)
            self.sctx.save()

    def _decide(self, box: str, n: int) -> None:
        self.decided += 1
        mailbox.hand(self.state, box, n, "decide", DECIDE)

    def _asked(self, box: str, n: int) -> None:
        sctx = self.sctx
        data = mailbox.question(self.state, box, n) or {}
        raw_choices = data.get("choices", [])
        choices = [str(c) for c in raw_choices] if isinstance(raw_choices, list) else []
        asked = clean(str(data.get("summary", "")), choices)
        summary, found = redact_secrets(asked.summary, f"question:{self.seat}")
        kept = []
        for c in asked.choices:
            text, more = redact_secrets(c, f"question:{self.seat}")
            kept.append(text)
            found += more
        with sctx.lock:
            mine = next((q for q in self._mine() if q.box == box), None)
            if mine is None:  # a new thread: within the run's bound, and someone to answer it?
                over = len(sctx.record.questions) >= sctx.config.ask.max_per_run
                # On a runner the seat parks on one question at a time: its first.
                parked = any(q.status == "waiting" for q in self._mine())
                if over or (on_runner(sctx) and (self.node not in PARKS or parked)):
                    mine = None
                else:
                    mine = Question(
                        id=_unused_id(box, {q.id for q in sctx.record.questions}),
                        box=box,
                        seat=self.seat,
                        node=self.node,
                        turn=self.turn,
                        label=self.label,
                    )
                    sctx.record.questions.append(mine)
            elif len(mine.turns) >= n:
                return  # recorded already
            parks = on_runner(sctx) and self.node in PARKS
            if mine is not None and on_runner(sctx) and not parks:
                mine = None  # a reply on a thread from a node that cannot park: decide
            if mine is not None:
                sctx.record.redactions.extend(found)
                mine.turns.append(QuestionTurn(summary=summary, choices=kept, asked_at=utcnow()))
                mine.status = "waiting" if parks else "open"
        if mine is None:
            self._decide(box, n)
            return
        who = where(self.node, self.label, self.seat)
        offered = f" [{' / '.join(kept)}]" if kept else ""
        how = (
            "the run parks once this wave is done; answer with: /magi answer"
            if parks
            else f"answer with: magi answer {mine.id} ..."
        )
        sctx.event(self.node, f"{who} asks ({mine.id}): {summary}{offered}; {how}", "warn")
        sctx.save()
        if parks:  # the agent ends its turn; the question goes out when the run parks
            mailbox.hand(self.state, box, n, "park", PARK)
            return
        self._notify(mine.id, who, summary)

    def _notify(self, qid: str, who: str, summary: str) -> None:
        command = self.sctx.config.notify.command
        if not command:
            return
        fields = {
            "summary": f"{who} asks ({qid}): {summary}",
            "run": self.sctx.record.id,
            "url": self.sctx.environ.get("MAGI_WEB_URL", ""),
            "event": "asked",
        }
        why = send(command, fields, self.sctx.environ)
        if why is not None:
            self.sctx.event("notify", f"{why}; the run is not affected", "warn")
            self.sctx.save()


def _unused_id(box: str, taken: set[str]) -> str:
    """The mailbox's own id, unless another seat's question holds it in this run."""
    qid = box
    while qid in taken:
        qid = mailbox.new_id()
    return qid


def close_open(sctx: SeatContext) -> list[str]:
    """At the start of a drive (a resume): a question open in the record was asked by a turn
    that is gone; it is ``unanswered`` now. The ids closed."""
    with sctx.lock:
        left = [q for q in sctx.record.questions if q.status == "open"]
        for q in left:
            q.status = "unanswered"
    return [q.id for q in left]
