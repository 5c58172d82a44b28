"""Asking one council seat: the port the engine talks to, and the adapter over real agents.

The engine hands the port a prompt and the shape it owes; the port returns the validated
answer or why there is none. ``AgentAsker`` asks through ``magi.seats`` (which redacts
secrets in the prompt, stores prompt, reply and raw output as artifacts, records the turn
and continues the seat's own conversation), and gives a malformed answer exactly one
re-ask, then ``invalid``. Nothing is repaired. The question and evidence were already
cleaned of personal data too (``council.setup``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from magi.agents.base import TurnResult
from magi.core.text.answers import Answer, parse_answer, reask_text
from magi.errors import AnswerError
from magi.model.run import SeatState
from magi.seats import SeatContext, ask, ensure_seat

__all__ = ["AgentAsker", "Asker", "Reply"]


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


@dataclass
class AgentAsker:
    """The real port: ``magi.seats.ask`` for each turn (budget, cancellation, artifacts,
    the turn record), with the council's own parse and one re-ask.

    A council seat never fails over to another agent: the seat is that agent with its
    weight and perspective, and handing it on would change the panel silently (seed 001:
    one sage, one round, one answer). The timeout is ``[council] timeout``, a quarter of it
    for the re-ask.
    """

    sctx: SeatContext
    cwd: Path
    timeout: float

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
        ensure_seat(self.sctx, seat, agent)
        result = ask(
            self.sctx,
            seat=seat,
            node=node,
            prompt=prompt,
            cwd=self.cwd,
            allow_write=False,
            timeout=self.timeout,
        )
        reply = _read(result, shape, labels, ids)
        if reply.status != "invalid":
            return reply
        live = bool(self.sctx.config.graph.sessions and self.sctx.record.seats[seat].session_id)
        again = reask_text(shape.SHAPE, reply.error)
        result = ask(
            self.sctx,
            seat=seat,
            node=node,
            prompt=again if live else f"{prompt}\n\n{again}",
            cwd=self.cwd,
            allow_write=False,
            timeout=self.timeout / 4,
            reask=True,
        )
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
