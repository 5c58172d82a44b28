"""Signals end a run's agents and leave it resumable: Ctrl-C, SIGTERM (CI cancel) and SIGHUP.

Agents run in their own sessions, out of the terminal's reach, so a signal to magi does not
reach them: magi cancels the run's token, which kills every agent group at once; the seats
see the cancellation, nothing is recorded for them, and the run is saved ``interrupted``.
A second signal gets Python's own behaviour.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from types import FrameType

from magi.agents.base import CancelToken
from magi.seats import Reporter

HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass
class Caught:
    """Which signal cancelled the run, if any; its exit code is 128 + its number."""

    signum: int | None = None

    @property
    def exit_code(self) -> int:
        return 128 + (self.signum or signal.SIGINT)


@contextlib.contextmanager
def interruptible(cancel: CancelToken, reporter: Reporter, run_id: str) -> Iterator[Caught]:
    caught = Caught()
    if threading.current_thread() is not threading.main_thread():
        yield caught  # signals only reach the main thread (e.g. the test runner's)
        return
    previous = {s: signal.getsignal(s) for s in HANDLED}

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        for s, handler in previous.items():
            signal.signal(s, handler)
        caught.signum = signum
        reporter.note(
            f"{signal.Signals(signum).name}: ending the agents; resume with  "
            f"magi run --resume {run_id}",
            "warn",
        )
        cancel.cancel()

    for s in HANDLED:
        signal.signal(s, on_signal)
    try:
        yield caught
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
