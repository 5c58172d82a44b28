"""A signal cancels the run whichever thread takes it and whatever lock the main thread holds."""

from __future__ import annotations

import signal
import threading

from magi.agents.base import CancelToken
from magi.engine import interruptible


class LockedReporter:
    """A reporter whose every note takes a non-reentrant lock, as the terminal's does."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.notes: list[str] = []
        self.stuck: list[str] = []

    def node(self, name: str) -> None:
        pass

    def seat(self, seat: str, state: str, detail: str = "") -> None:
        pass

    def note(self, message: str, level: str = "info") -> None:
        if not self.lock.acquire(timeout=5):
            self.stuck.append(message)  # a handler in the thread holding it: a deadlock
            return
        try:
            self.notes.append(message)
        finally:
            self.lock.release()


def test_a_sigterm_taken_by_a_worker_thread_cancels_while_the_main_thread_waits() -> None:
    """The main thread blocked on a wait that only the cancellation ends still gets it."""
    cancel, reporter = CancelToken(), LockedReporter()
    release = threading.Event()
    worker = threading.Thread(target=release.wait, daemon=True)  # a judge's thread, waiting
    worker.start()
    try:
        with interruptible(cancel, reporter, "r1") as caught:
            assert worker.ident is not None
            signal.pthread_kill(worker.ident, signal.SIGTERM)
            # Python runs handlers in the main thread only, once it runs bytecode again.
            assert cancel.wait(10), "a signal taken by another thread never cancelled the run"
        assert caught.exit_code == 128 + signal.SIGTERM
        assert reporter.notes == ["SIGTERM: ending the agents; resume with  magi run --resume r1"]
    finally:
        release.set()
        worker.join(10)


def test_a_sigint_while_the_main_thread_prints_does_not_deadlock_on_the_reporter() -> None:
    """The signal lands while the main thread holds the reporter's lock: no self-deadlock."""
    cancel, reporter = CancelToken(), LockedReporter()
    with interruptible(cancel, reporter, "r2") as caught:
        with reporter.lock:  # the main thread in the middle of printing a seat's line
            signal.raise_signal(signal.SIGINT)  # Python's handler runs before this returns
        assert cancel.wait(10), "the signal never cancelled the run"
    assert reporter.stuck == [], "the handler waited on a lock its own thread held"
    assert reporter.notes == ["SIGINT: ending the agents; resume with  magi run --resume r2"]
    assert caught.exit_code == 130


def test_after_the_run_the_previous_handlers_and_wakeup_fd_are_back() -> None:
    """Nothing of magi's handling outlives the run: handlers and the wakeup fd restored."""
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    fd_before = signal.set_wakeup_fd(-1)  # the only way to read it is to set it
    signal.set_wakeup_fd(fd_before)
    with interruptible(CancelToken(), LockedReporter(), "r3"):
        assert signal.getsignal(signal.SIGTERM) is not before[signal.SIGTERM]
    assert {s: signal.getsignal(s) for s in before} == before
    fd_after = signal.set_wakeup_fd(fd_before)
    assert fd_after == fd_before, "the run's wakeup fd was left installed"
