"""In-process agents for graph tests: answer from a function, record every request."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from magi.agents.base import TurnRequest, TurnResult, TurnStatus, Usage

Reply = Callable[[TurnRequest], TurnResult]


@dataclass
class FakeAgent:
    """Implements ``magi.agents.base.Agent``; ``requests`` is what it was asked, in order."""

    id: str
    reply: Reply
    kind: str = "fake"
    requests: list[TurnRequest] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def run_turn(self, request: TurnRequest) -> TurnResult:
        with self._lock:
            self.requests.append(request)
        return self.reply(request)


def answering(text: str, *, cost_usd: float | None = None, session: str | None = None) -> Reply:
    """A reply function that always says ``text``."""

    def reply(request: TurnRequest) -> TurnResult:
        return TurnResult(
            TurnStatus.OK,
            text=text,
            session_id=session or request.session_id,
            usage=Usage(cost_usd=cost_usd),
        )

    return reply
