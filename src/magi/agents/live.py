"""What a turn's process says while it runs: lines made fit to show, and the stuck-signal watch.

A CLI that cannot reach its provider, or is not logged in, often does not exit: codex prints
``Reconnecting... waiting for network`` for as long as it is left running, gemini retries
``fetch failed`` with a growing backoff. Each adapter names those lines (`Signals`) and says
which of its lines show the model at work (`LiveLine.progress`). `SignalWatch` ends the wait
when, for ``after`` seconds, a turn has shown such signals and nothing that is progress, so
the turn fails in two minutes with the CLI's own words instead of timing out an hour later.

Gemini and claude print nothing while they work, so a signal must also be recent: a CLI that
retried once, recovered and then worked silently for ten minutes is not stuck.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from magi.agents.base import Failure

LINE_MAX = 300  # characters a person is shown of one line
_PARTIAL_MAX = 16_384  # bytes of an unfinished line kept; a line longer than this is cut
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def scrub(line: str, limit: int = LINE_MAX) -> str:
    """``line`` without escape sequences or control characters, trimmed and capped."""
    text = _CONTROL.sub("", _ANSI.sub("", line).replace("\t", " ")).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Lines:
    """Splits a byte stream into scrubbed lines (``\\n`` or ``\\r`` ends one) for a callback."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        self._emit = emit
        self._partial = b""

    def feed(self, chunk: bytes) -> None:
        data = self._partial + chunk
        *done, rest = re.split(rb"[\r\n]", data)
        self._partial = rest[-_PARTIAL_MAX:]
        for raw in done:
            self._send(raw)

    def close(self) -> None:
        if self._partial:
            self._send(self._partial)
        self._partial = b""

    def _send(self, raw: bytes) -> None:
        # Scrubbing (and the cap) is left to whoever shows the line: adapters parse it first.
        text = raw.decode("utf-8", errors="replace").strip()
        if text:
            self._emit(text)


@dataclass(frozen=True)
class LiveLine:
    """One output line as an adapter reads it: what to show (None: nothing) and whether it
    shows the model at work (an answer, a tool call), which clears any signal seen before."""

    text: str | None
    progress: bool = False
    # The CLI said, in its own structured words, that it cannot go on (claude's api_retry
    # of a 401): a signal that ends the turn at once, not after ``after`` seconds of them.
    final: bool = False


@dataclass(frozen=True)
class Signals:
    """A CLI's "cannot reach the provider" and "not authenticated" lines."""

    unreachable: re.Pattern[str] | None = None
    unauthenticated: re.Pattern[str] | None = None

    def classify(self, text: str) -> Failure | None:
        if self.unauthenticated is not None and self.unauthenticated.search(text):
            return "auth"
        if self.unreachable is not None and self.unreachable.search(text):
            return "unreachable"
        return None


NO_SIGNALS = Signals()


class SignalWatch:
    """Tracks whether a turn shows nothing but signals; thread-safe (readers feed it)."""

    def __init__(
        self,
        signals: Signals,
        after: float | None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.signals = signals
        self.after = after
        self.clock = clock
        self._lock = threading.Lock()
        self._since: float | None = None  # first signal since the last progress
        self._latest: tuple[float, Failure, str] | None = None
        self._final: tuple[Failure, str] | None = None

    def see(self, line: LiveLine) -> None:
        with self._lock:
            if line.progress:
                self._since, self._latest = None, None
                return
            kind = self.signals.classify(line.text) if line.text else None
            if kind is None or line.text is None:
                return
            now = self.clock()
            if self._since is None:
                self._since = now
            self._latest = (now, kind, line.text)
            if line.final:
                self._final = (kind, line.text)

    @property
    def final(self) -> bool:
        """A final signal was seen (``LiveLine.final``)."""
        with self._lock:
            return self._final is not None

    @property
    def current(self) -> tuple[Failure, str] | None:
        """The latest signal not cleared by progress since: (kind, line)."""
        with self._lock:
            return None if self._latest is None else self._latest[1:]

    def stuck(self) -> tuple[Failure, str] | None:
        """(kind, line) once only signals were seen for ``after`` s, the last one recent;
        at once after a final one."""
        with self._lock:
            if self._final is not None:
                return self._final
            if self.after is None or self._since is None or self._latest is None:
                return None
            now = self.clock()
            at, kind, text = self._latest
            if now - self._since >= self.after and now - at <= self.after:
                return kind, text
            return None
