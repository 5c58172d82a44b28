"""What a person sees while a run is live: the node, the seats out, the elapsed time.

On a terminal a single status line is redrawn in place; piped (or in CI) every change is a
plain line, so logs read top to bottom and nothing ever takes over the screen.

A seat whose CLI has been quiet for ``quiet_after`` seconds gets its latest output line
printed once (``impl-A (codex): Reconnecting... waiting for network``), so a turn stuck
on its provider shows why instead of an hour of ``impl-A: asked``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console
from rich.status import Status
from rich.text import Text

QUIET_AFTER_S = 5.0


@dataclass
class _Heard:
    line: str
    source: str
    at: float
    shown: bool = False


class QuietLines:
    """Each seat's latest output line, and which are due to be shown (quiet long enough)."""

    def __init__(self, after: float, clock: Callable[[], float]) -> None:
        self.after = after
        self.clock = clock
        self._latest: dict[str, _Heard] = {}

    def heard(self, seat: str, line: str, source: str = "") -> None:
        self._latest[seat] = _Heard(line, source, self.clock())

    def forget(self, seat: str) -> None:
        self._latest.pop(seat, None)

    def due(self) -> list[tuple[str, str, str]]:
        """(seat, source, line) of each seat quiet for ``after`` s since a line not yet shown."""
        now = self.clock()
        out = []
        for seat, heard in sorted(self._latest.items()):
            if not heard.shown and now - heard.at >= self.after:
                heard.shown = True
                out.append((seat, heard.source, heard.line))
        return out


class TerminalReporter:
    """Implements the seats' ``Reporter``; ``output`` takes each seat's live lines."""

    def __init__(
        self,
        console: Console,
        *,
        clock: Callable[[], float] = time.monotonic,
        quiet_after: float = QUIET_AFTER_S,
        ticker: bool = True,
    ) -> None:
        self.console = console
        self.clock = clock
        self.started = clock()
        self.current = "start"
        self.out: set[str] = set()
        self.lock = threading.Lock()
        self.quiet = QuietLines(quiet_after, clock)
        self.status: Status | None = None
        self._stop = threading.Event()
        if console.is_terminal:
            self.status = console.status("starting", spinner="dots")
            self.status.start()
        if ticker:
            # The clock on the status line moves even while every seat is silent for minutes,
            # and a quiet seat's latest line shows up without anyone printing.
            threading.Thread(target=self._tick_forever, daemon=True).start()

    def _tick_forever(self) -> None:
        while not self._stop.wait(1.0):
            self.tick()

    def tick(self) -> None:
        """Redraw the status line and print the latest line of each seat gone quiet."""
        with self.lock:
            due = self.quiet.due()
            self._refresh()
        for seat, source, line in due:
            who = f"{seat} ({source})" if source else seat
            self._line(f"  {who}: {line}", "dim")

    def _refresh(self) -> None:
        if self.status is not None:
            seats = ", ".join(sorted(self.out)) or "-"
            self.status.update(f"{self.current}  out: {seats}  {self._elapsed()}")

    def _elapsed(self) -> str:
        s = int(self.clock() - self.started)
        return f"{s // 60:02d}:{s % 60:02d}"

    def _line(self, text: str, style: str = "", *, bold: bool = False) -> None:
        # Messages may quote agent output: printed as literal text, never as rich markup.
        line = Text(f"{self._elapsed()} ", style="dim")
        line.append(text, style=("bold " if bold else "") + style)
        with self.lock:
            self.console.print(line, highlight=False)
            self._refresh()

    def node(self, name: str) -> None:
        self.current = name
        self._line(name, bold=True)

    def seat(self, seat: str, state: str, detail: str = "") -> None:
        with self.lock:
            if state in ("asked", "running"):
                self.out.add(seat)
            else:
                self.out.discard(seat)
                self.quiet.forget(seat)
        extra = f" ({detail})" if detail else ""
        self._line(f"  {seat}: {state}{extra}")

    def output(self, seat: str, line: str, source: str = "") -> None:
        """A line the seat's CLI printed (scrubbed); shown only once the seat goes quiet."""
        with self.lock:
            if seat in self.out:
                self.quiet.heard(seat, line, source)

    def note(self, message: str, level: str = "info") -> None:
        style = {"warn": "yellow", "error": "red"}.get(level, "")
        self._line(f"  {message}", style)

    def close(self) -> None:
        self._stop.set()
        with self.lock:
            if self.status is not None:
                self.status.stop()
                self.status = None
