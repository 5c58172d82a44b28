"""Questions asked during a seat's turn: recorded as they come, answered, bounded.

While a seat's turn runs, ``Listening`` looks into its mailbox (``magi.seats.mailbox``)
every ``POLL_S``. A new question is cleaned (one line, capped, secrets redacted), recorded
in ``Record.questions`` against the seat, the node and the candidate's label, saved, and
told to ``[notify] command``; the agent's ``magi ask`` then waits for ``magi answer``. A
question past ``[ask] max_per_run``, or one asked where nobody can answer (a runner's
agents job, until parking on a question exists), is answered at once with ``DECIDE``. An
answer is recorded as it lands; a question still open when the turn ends is recorded
``unanswered``.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

from magi.core.asking import DECIDE, BadQuestion, clean, where
from magi.core.sanitize import redact_secrets
from magi.notify import send
from magi.seats import mailbox
from magi.seats.context import SeatContext, utcnow
from magi.state.model import Question, QuestionTurn

POLL_S = 0.25  # how soon a question is recorded, and an answer seen


class Listening:
    """The mailbox of one seat turn, looked into on a thread of its own until ``stop``."""

    def __init__(
        self, sctx: SeatContext, *, seat: str, node: str, turn: int, label: str, state: Path
    ) -> None:
        self.sctx, self.seat, self.node, self.turn, self.label = sctx, seat, node, turn, label
        self.state = state
        self._stop = threading.Event()
        self._refused: set[tuple[str, int]] = set()
        self._thread = threading.Thread(target=self._loop, name=f"ask-{seat}", daemon=True)

    def start(self) -> Listening:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sweep()
        with self.sctx.lock:
            left = [q for q in self._mine() if q.status == "open"]
            for q in left:
                q.status = "unanswered"
        if left:
            self.sctx.event(
                self.node,
                f"{self.seat}: its turn ended with question(s) {', '.join(q.id for q in left)} "
                "unanswered",
                "warn",
            )
            self.sctx.save()

    def _loop(self) -> None:
        while not self._stop.wait(POLL_S):
            self.sweep()

    def _mine(self) -> list[Question]:
        return [q for q in self.sctx.record.questions if q.seat == self.seat]

    def sweep(self) -> None:
        """Record what is new in the mailbox: questions, and answers to recorded ones."""
        try:
            self._answers()
            waiting = mailbox.pending(self.state)
        except BadQuestion as e:
            self._refuse(("", 0), e)
            return
        for qid, n in waiting:
            if (qid, n) in self._refused:
                continue
            try:
                self._asked(qid, n)
            except BadQuestion as e:
                self._refuse((qid, n), e)

    def _refuse(self, key: tuple[str, int], why: BadQuestion) -> None:
        """Said once, not at every look; a question that could not be taken is answered
        "decide yourself", so the agent's wait ends."""
        if key in self._refused:
            return
        self._refused.add(key)
        self.sctx.event(self.node, f"{self.seat}: a question was not taken: {why}", "warn")
        self.sctx.save()
        if key[0]:
            with contextlib.suppress(BadQuestion, OSError):
                mailbox.answer(self.state, key[0], key[1], "decide", DECIDE)

    def _answers(self) -> None:
        changed = False
        with self.sctx.lock:
            for q in self._mine():
                last = q.turns[-1] if q.turns else None
                if last is None or last.how is not None:
                    continue
                got = mailbox.answer_of(self.state, q.id, len(q.turns))
                if got is None:
                    continue
                last.how = got.get("how") if got.get("how") in ("choice", "say") else "decide"
                last.answer = str(got.get("answer", ""))
                last.answered_at = utcnow()
                q.status = "answered"
                changed = True
        if changed:
            self.sctx.save()

    def _asked(self, qid: str, n: int) -> None:
        sctx = self.sctx
        with sctx.lock:
            known = next((q for q in sctx.record.questions if q.id == qid), None)
            if known is not None and (known.seat != self.seat or len(known.turns) >= n):
                return  # recorded already (or another seat's id: never this seat's)
        data = mailbox.read(mailbox.thread(self.state, qid) / f"q-{n}.json") or {}
        raw_choices = data.get("choices", [])
        choices = [str(c) for c in raw_choices] if isinstance(raw_choices, list) else []
        asked = clean(str(data.get("summary", "")), choices)
        summary, found = redact_secrets(asked.summary, f"question:{self.seat}")
        kept = []
        for c in asked.choices:
            text, more = redact_secrets(c, f"question:{self.seat}")
            kept.append(text)
            found += more
        step = QuestionTurn(summary=summary, choices=kept, asked_at=utcnow())
        with sctx.lock:
            sctx.record.redactions.extend(found)
            threads = len({q.id for q in sctx.record.questions})
            if known is None:
                known = Question(
                    id=qid, seat=self.seat, node=self.node, turn=self.turn, label=self.label
                )
                sctx.record.questions.append(known)
                threads += 1
            known.turns.append(step)
            known.status = "open"
            limit = sctx.config.ask.max_per_run
            on_runner = sctx.environ.get("GITHUB_ACTIONS") == "true"
            decide = threads > limit or on_runner
        who = where(self.node, self.label, self.seat)
        if decide:
            why = (
                "nobody can answer mid-turn on a runner yet"
                if on_runner
                else f"past [ask] max_per_run = {limit}"
            )
            mailbox.answer(self.state, qid, n, "decide", DECIDE)
            sctx.event(self.node, f"{who} asked ({qid}): {summary}; answered: decide ({why})")
            sctx.save()
            self._answers()
            return
        sctx.event(
            self.node,
            f"{who} asks ({qid}): {summary}"
            + (f" [{' / '.join(kept)}]" if kept else "")
            + f"; answer with: magi answer {qid} ...",
            "warn",
        )
        sctx.save()
        self._notify(qid, who, summary)

    def _notify(self, qid: str, who: str, summary: str) -> None:
        command = self.sctx.config.notify.command
        if not command:
            return
        fields = {
            "summary": f"{who} asks: {summary}",
            "run": self.sctx.record.id,
            "url": self.sctx.environ.get("MAGI_WEB_URL", ""),
            "event": "asked",
        }
        why = send(command, fields, self.sctx.environ)
        if why is not None:
            self.sctx.event("notify", f"{why}; the run is not affected", "warn")
            self.sctx.save()
