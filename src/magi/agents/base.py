"""What one agent turn is, whatever CLI runs it: the request, the result, the port.

A turn is keyed by *seat* (``impl-B``, ``judge-2``, ``review-1``, ``fix``), never by agent
id: the conversation a seat continues is the seat's own, so a model sitting as a judge
cannot see the conversation in which it wrote a candidate.
"""

from __future__ import annotations

import contextlib
import enum
import os
import signal
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from magi.core.seats.jail import JailSpec
from magi.model.run import Usage

__all__ = ["Agent", "CancelToken", "TurnRequest", "TurnResult", "TurnStatus", "Usage"]

# Why a turn failed, when it says something about the agent rather than the task: it could
# not log in, or could not reach its provider. Failover skips such an agent for the run.
Failure = Literal["auth", "unreachable"]


class TurnStatus(enum.StrEnum):
    OK = "ok"
    TIMEOUT = "timeout"
    ERROR = "error"
    QUOTA = "quota"  # a rate limit or exhausted plan: refunded, the run stalls rather than fails
    INVALID = "invalid"  # answered, but not in the shape the seat owes (set by the caller)


class CancelToken:
    """Cancellation of one run: ``cancel()`` kills every process group registered under it.

    It belongs to a run, not to the process, so a worker that runs one run after another
    can cancel one without poisoning the next. A group registered after ``cancel()`` is
    killed at once (it started in the instant after the sweep).
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._groups: set[int] = set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self) -> None:
        self._event.set()
        with self._lock:
            for pgid in list(self._groups):
                _killpg(pgid)

    def register(self, pgid: int, *, contained: bool = False) -> None:
        """``pgid`` is ended by a cancel. ``contained``: it runs in a pid namespace that dies
        with magi (a jailed turn), so nothing of it can outlive a killed magi."""
        with self._lock:
            self._groups.add(pgid)
            if self._event.is_set():
                _killpg(pgid)

    def unregister(self, pgid: int) -> None:
        with self._lock:
            self._groups.discard(pgid)

    def wait(self, timeout: float | None = None) -> bool:
        """True once cancelled (within ``timeout`` seconds)."""
        return self._event.wait(timeout)


def _killpg(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is empty
        os.killpg(pgid, signal.SIGKILL)


@dataclass(frozen=True)
class TurnRequest:
    """Everything an adapter needs for one turn.

    ``session_id`` is the seat's live conversation (None: open a new one). ``run_id`` and
    ``node`` reach the process as MAGI_RUN / MAGI_NODE; ``label`` is the candidate label a
    seat works on, when there is one (``{label}`` for command agents). ``environ`` is the
    environment the agent's own is filtered from (adapters never read ``os.environ``);
    ``cancel`` is the run's token. ``on_output`` is fed each new line the process prints
    (trimmed and scrubbed, for a person to read); ``unreachable_after`` is how long a turn
    may show nothing but a cannot-reach or not-logged-in signal before it ends as an error
    (None: until its timeout).
    """

    seat: str
    prompt: str
    cwd: Path
    allow_write: bool
    timeout: float
    session_id: str | None = None
    # The running total the CLI last reported for ``session_id``, for a CLI that reports
    # totals rather than a turn's usage (codex on a resumed thread): what to subtract.
    session_total: Usage | None = None
    run_id: str = ""
    node: str = ""
    turn: int = 1
    label: str = ""
    prompt_file: Path | None = (
        None  # where the prompt was stored (artifacts); command agents read it
    )
    environ: Mapping[str, str] = field(default_factory=dict)
    cancel: CancelToken | None = None
    on_output: Callable[[str], None] | None = None
    unreachable_after: float | None = 120.0
    jail: JailSpec | None = None  # the process runs inside it (bubblewrap); None: unjailed
    path: tuple[Path, ...] = ()  # put first on the process's PATH (magi's own ``magi``)
    state_dir: Path | None = None  # the seat's own scratch, kept across its turns


@dataclass(frozen=True)
class TurnResult:
    """What came back. ``text`` is the agent's final reply, never an instruction to magi."""

    status: TurnStatus
    text: str = ""
    session_id: str | None = None
    usage: Usage = field(default_factory=Usage)
    duration_s: float = 0.0
    error: str | None = None  # why the turn is not OK, in one line
    raw_stdout: str = ""  # capped; stored as an artifact
    raw_stderr: str = ""  # capped; stored as an artifact
    exit_code: int | None = None
    # Why an error is the agent's and not the turn's: it cannot log in or reach its
    # provider, so failover skips it for the rest of the run.
    failure: Failure | None = None
    # The CLI's running total for ``session_id`` after this turn, when it reports totals;
    # ``usage`` is then this turn's share (the difference from the request's total).
    session_total: Usage | None = None

    @property
    def ok(self) -> bool:
        return self.status is TurnStatus.OK


@runtime_checkable
class Agent(Protocol):
    """The port the graph talks to. Real adapters spawn a CLI; fakes answer in-process.

    An agent that runs its turns inside ``TurnRequest.jail`` says so with a class attribute
    ``applies_jail = True`` (``CliAgent`` does); without it, magi guards its turns as
    unjailed ones, whatever jail it was handed."""

    id: str
    kind: str

    def run_turn(self, request: TurnRequest) -> TurnResult: ...
