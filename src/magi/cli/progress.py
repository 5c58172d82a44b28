"""What a person sees while a run is live: the node, the seats out, the elapsed time.

On a terminal a single status line is redrawn in place; piped (or in CI) every change is a
plain line, so logs read top to bottom and nothing ever takes over the screen.
"""

from __future__ import annotations

import threading
import time

from rich.console import Console
from rich.status import Status
from rich.text import Text


class TerminalReporter:
    """Implements ``magi.graph.context.Reporter``."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.started = time.monotonic()
        self.current = "start"
        self.out: set[str] = set()
        self.lock = threading.Lock()
        self.status: Status | None = None
        self._stop = threading.Event()
        if console.is_terminal:
            self.status = console.status("starting", spinner="dots")
            self.status.start()
            # The clock on the status line moves even while every seat is silent for minutes.
            threading.Thread(target=self._tick, daemon=True).start()

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            with self.lock:
                self._refresh()

    def _refresh(self) -> None:
        if self.status is not None:
            seats = ", ".join(sorted(self.out)) or "-"
            self.status.update(f"{self.current}  out: {seats}  {self._elapsed()}")

    def _elapsed(self) -> str:
        s = int(time.monotonic() - self.started)
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
        extra = f" ({detail})" if detail else ""
        self._line(f"  {seat}: {state}{extra}")

    def note(self, message: str, level: str = "info") -> None:
        style = {"warn": "yellow", "error": "red"}.get(level, "")
        self._line(f"  {message}", style)

    def close(self) -> None:
        self._stop.set()
        with self.lock:
            if self.status is not None:
                self.status.stop()
                self.status = None
