"""Asking one council seat: the port the engine talks to, and the adapter over real agents.

The engine hands the port a prompt and the shape it owes; the port returns the validated
answer or why there is none. ``AgentAsker`` redacts the prompt (secrets, emails, IPs,
connection strings) before it leaves the machine, stores prompt, reply and raw output as
artifacts, records the turn, continues the seat's own conversation when it has one, and
gives a malformed answer exactly one re-ask, then ``invalid``. Nothing is repaired.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

from magi.agents.base import Agent, TurnRequest, TurnResult
from magi.core.answers import Answer, parse_answer, reask_text
from magi.core.sanitize import redact_secrets
from magi.errors import AnswerError
from magi.state.council import CouncilRun
from magi.state.model import Redaction, Seat, SeatState, Turn, Usage
from magi.state.store import Store

__all__ = ["AgentAsker", "Asker", "Reply", "record_redactions"]


@dataclass(frozen=True)
class Reply:
    answer: Answer | None
    status: SeatState
    error: str = ""


class Asker(Protocol):
    """One turn of one seat that owes a ``shape`` answer."""

    def __call__(
        self,
        *,
        seat: str,
        agent: str,
        node: str,
        prompt: str,
        shape: type[Answer],
        labels: Sequence[str] | None = None,
        ids: Sequence[str] | None = None,
    ) -> Reply: ...


def record_redactions(rec: CouncilRun, found: list[Redaction]) -> None:
    for r in found:
        for have in rec.redactions:
            if have.where == r.where and have.kind == r.kind:
                have.count += r.count
                break
        else:
            rec.redactions.append(r)


@dataclass
class AgentAsker:
    """The real port: agents from the roster, artifacts and turns in the council record."""

    rec: CouncilRun
    store: Store
    agents: Mapping[str, Agent]
    cwd: Path
    timeout: float
    clock: Callable[[], datetime]
    lock: threading.RLock
    sessions: bool = True

    def _turn(self, seat: str, agent: str, node: str, prompt: str, reask: bool) -> TurnResult:
        with self.lock:
            prompt, found = redact_secrets(prompt, f"prompt:{seat}", personal=True)
            record_redactions(self.rec, found)
            record = self.rec.seats.setdefault(seat, Seat(name=seat, agent=agent))
            turn_no = 1 + sum(1 for t in self.rec.turns if t.seat == seat)
            stem = f"{node}-{seat}-t{turn_no}"
            prompt_rel = self.store.write_artifact(self.rec.id, f"{stem}.prompt.md", prompt)
            session = record.session_id if self.sessions else None
        request = TurnRequest(
            seat=seat,
            prompt=prompt,
            cwd=self.cwd,
            allow_write=False,
            timeout=self.timeout / 4 if reask else self.timeout,
            session_id=session,
            run_id=self.rec.id,
            node=node,
            turn=turn_no,
            prompt_file=self.store.run_dir(self.rec.id) / prompt_rel,
        )
        started = self.clock()
        t0 = time.monotonic()
        result = self.agents[agent].run_turn(request)
        duration = result.duration_s or time.monotonic() - t0
        with self.lock:
            reply_rel = self.store.write_artifact(self.rec.id, f"{stem}.reply.md", result.text)
            raw = f"{result.raw_stdout}\n--- stderr ---\n{result.raw_stderr}"
            raw_rel = self.store.write_artifact(self.rec.id, f"{stem}.raw.txt", raw)
            if result.session_id and self.sessions:
                record.session_id = result.session_id
            self.rec.turns.append(
                Turn(
                    seat=seat,
                    node=node,
                    turn=turn_no,
                    agent=agent,
                    status=result.status.value,
                    started_at=started,
                    duration_s=round(duration, 3),
                    session_id=result.session_id,
                    prompt_artifact=prompt_rel,
                    reply_artifact=reply_rel,
                    raw_artifact=raw_rel,
                    error=result.error,
                    usage=Usage(**vars(result.usage)),
                    reask=reask,
                )
            )
        return result

    def __call__(
        self,
        *,
        seat: str,
        agent: str,
        node: str,
        prompt: str,
        shape: type[Answer],
        labels: Sequence[str] | None = None,
        ids: Sequence[str] | None = None,
    ) -> Reply:
        result = self._turn(seat, agent, node, prompt, reask=False)
        reply = _read(result, shape, labels, ids)
        if reply.status != "invalid":
            return reply
        live = bool(self.sessions and self.rec.seats[seat].session_id)
        again = reask_text(shape.SHAPE, reply.error)
        result = self._turn(seat, agent, node, again if live else f"{prompt}\n\n{again}", True)
        return _read(result, shape, labels, ids)


def _read(
    result: TurnResult,
    shape: type[Answer],
    labels: Sequence[str] | None,
    ids: Sequence[str] | None,
) -> Reply:
    if not result.ok:
        return Reply(None, result.status.value, result.error or "")
    try:
        answer = parse_answer(
            result.text,
            shape,
            labels=list(labels) if labels is not None else None,
            finding_ids=ids,
        )
    except AnswerError as exc:
        return Reply(None, "invalid", exc.message)
    return Reply(answer, "ok")
