"""Signals end a run's agents and leave it resumable: Ctrl-C, SIGTERM (CI cancel) and SIGHUP.

Agents run in their own sessions, out of the terminal's reach, so a signal to magi does not
reach them: magi cancels the run's token, which kills every agent group at once; the seats
see the cancellation, nothing is recorded for them, and the run is saved ``interrupted``.
A second signal gets Python's own behaviour.

The work is done by a watcher thread woken through ``signal.set_wakeup_fd``, never inside
the Python-level handler, for two reasons found in a kill test that hung:

* the kernel may deliver a process-directed signal to any thread. Python runs its handlers
  in the main thread only, and only once that thread executes bytecode again: a main thread
  blocked waiting for a judge (``Future.result()``) that only the cancellation would end
  never ran the handler, and magi waited forever. The C-level handler writes the signal's
  number to the wakeup fd from whichever thread took it, so the watcher always wakes.
* a handler runs in the middle of whatever the main thread was doing: had it been printing
  a seat's line (the progress lock) or registering a process (the token's lock) when the
  signal came, a handler taking the same non-reentrant lock would deadlock on itself.

https://docs.python.org/3/library/signal.html#execution-of-python-signal-handlers
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType

from magi.agents.base import CancelToken
from magi.seats import Reporter

HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_JOIN_S = 5.0


@dataclass
class Caught:
    """Which signal cancelled the run, if any; its exit code is 128 + its number."""

    signum: int | None = None

    @property
    def exit_code(self) -> int:
        return 128 + (self.signum or signal.SIGINT)


@contextlib.contextmanager
def interruptible(
    cancel: CancelToken,
    reporter: Reporter,
    run_id: str,
    *,
    park: Callable[[str], None] | None = None,
) -> Iterator[Caught]:
    """Signals cancel the run's token (the agents end, the run is left ``interrupted``).

    ``park``: a first SIGTERM asks the run to park at its next node boundary instead (the
    seats that are out finish their turn and are kept); any later signal cancels as usual.
    """
    caught = Caught()
    # SIGTERMs seen by the handler, and whether the watcher has asked for the park: the
    # first SIGTERM under ``park`` parks, any later signal cancels as usual.
    parking = {"seen": 0, "asked": 0}
    if threading.current_thread() is not threading.main_thread():
        yield caught  # signals only reach the main thread (e.g. the test runner's)
        return
    previous = {s: signal.getsignal(s) for s in HANDLED}

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        # Main thread, at any bytecode: no lock, no I/O (the watcher does the work).
        if park is not None and signum == signal.SIGTERM and not parking["seen"]:
            parking["seen"] = 1
            return  # parking: the next signal, whichever, gets the usual treatment
        for s, handler in previous.items():
            signal.signal(s, handler)
        if caught.signum is None:
            caught.signum = signum

    def on_wakeup(signum: int) -> None:
        # The watcher thread: free to wait for the locks the main thread may hold.
        if signum not in HANDLED:
            return
        if park is not None and signum == signal.SIGTERM and not parking["asked"]:
            parking["asked"] = 1
            reporter.note(
                "SIGTERM: parking at the next node boundary (the seats that are out finish "
                "their turn); a second signal ends them now",
                "warn",
            )
            park("SIGTERM under --park")
            return
        if caught.signum is None:
            caught.signum = signum
        if cancel.cancelled:
            return  # a second signal: the first one's cancellation is under way
        try:
            reporter.note(
                f"{signal.Signals(signum).name}: ending the agents; resume with  "
                f"magi run --resume {run_id}",
                "warn",
            )
        finally:
            cancel.cancel()

    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)  # set_wakeup_fd requires it: a handler never blocks
    watcher = threading.Thread(
        target=_watch, args=(read_fd, on_wakeup), name="magi-signals", daemon=True
    )
    watcher.start()
    old_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    for s in HANDLED:
        signal.signal(s, on_signal)
    try:
        yield caught
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        signal.set_wakeup_fd(old_fd)
        os.close(write_fd)  # the watcher reads end of file and returns
        watcher.join(_JOIN_S)
        if not watcher.is_alive():  # else it still reads: never hand it a reused fd number
            os.close(read_fd)


def _watch(read_fd: int, on_wakeup: Callable[[int], None]) -> None:
    """Hand each signal number written to the wakeup fd to ``on_wakeup``, until the fd closes."""
    while True:
        try:
            data = os.read(read_fd, 64)
        except OSError:
            return
        if not data:
            return
        for signum in data:
            on_wakeup(signum)
