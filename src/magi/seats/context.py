"""What asking a seat needs: the record, its store, the config, the agents, and the run's token."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Literal, Protocol

from magi.agents.base import Agent, CancelToken
from magi.config.load import machine_config_dir
from magi.core.figures.pricing import Spend
from magi.core.seats.jail import JailSpec
from magi.model.config import Config
from magi.model.run import Event, Record, RunStatus, Seat
from magi.sandbox.bwrap import JailPaths
from magi.state.store import Store


class Stop(Exception):
    """Ends a node sequence with a final status (failed, stalled, held, verified_noop...)."""

    def __init__(self, status: RunStatus, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class Cancelled(Exception):
    """The run's token was cancelled (Ctrl-C, SIGTERM, SIGHUP, a stop from GitHub).

    A seat cut off this way gave no answer: nothing is recorded for it, so a resume asks it
    again.
    """


class TurnGuard(Protocol):
    """What a kind of run checks around every seat turn (``magi.graph.guard`` for a
    competition): ``before`` takes its snapshots, ``after`` restores what the turn changed
    outside what it was allowed to, records it against the seat, and returns the lines.
    ``jail``: the turn's jail (None: unjailed), which says what the turn can reach."""

    def before(self, sctx: SeatContext, seat: str, node: str, *, jail: JailSpec | None) -> None: ...
    def after(self, sctx: SeatContext, seat: str, node: str) -> list[str]: ...


class DaySpend(Protocol):
    """Where ``[budget] day_usd`` reads what other runs spent on ``day`` (UTC), ``besides``
    the run asking (``magi.seats.day_spend``: this machine's store, or on a runner the
    repository's run records). Read once per process."""

    def spent(self, sctx: SeatContext, day: date, *, besides: str) -> Spend: ...


class Reporter(Protocol):
    """Progress sink: the terminal while a run is live, nothing in tests."""

    def node(self, name: str) -> None: ...
    def seat(self, seat: str, state: str, detail: str = "") -> None: ...
    def note(self, message: str, level: str = "info") -> None: ...


class SilentReporter:
    def node(self, name: str) -> None:
        pass

    def seat(self, seat: str, state: str, detail: str = "") -> None:
        pass

    def note(self, message: str, level: str = "info") -> None:
        pass


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(kw_only=True)
class SeatContext:
    """A live record plus the ports its seats need. ``lock`` guards the record across
    parallel seats; ``cache`` is per process and never persisted."""

    record: Record
    store: Store
    config: Config
    agents: Mapping[str, Agent]
    environ: Mapping[str, str]
    cancel: CancelToken = field(default_factory=CancelToken)
    reporter: Reporter = field(default_factory=SilentReporter)
    clock: Callable[[], datetime] = utcnow
    lock: threading.RLock = field(default_factory=threading.RLock)
    cache: dict[str, object] = field(default_factory=dict)
    guard: TurnGuard | None = None
    day_spend: DaySpend | None = None  # None: chosen by magi.seats.day_spend.source

    @property
    def run_dir(self) -> Path:
        return self.store.run_dir(self.record.id)

    @property
    def roster(self) -> list[str]:
        return [a.id for a in self.config.agents]

    def save(self) -> None:
        """State is written before the next step starts: every node calls this as it goes."""
        with self.lock:
            self.store.save(self.record)

    def event(
        self, node: str, message: str, level: Literal["info", "warn", "error"] = "info"
    ) -> None:
        with self.lock:
            self.record.events.append(
                Event(at=self.clock(), node=node, message=message, level=level)
            )
        self.reporter.note(message, level)

    def jail_paths(self, cwd: Path, *, writable: bool = True) -> JailPaths:
        """Hidden from every seat: magi's home and the user's magi config layer.
        ``writable``: the seat may write its tree (and the git directories it needs)."""
        return JailPaths(hide=(self.store.home, machine_config_dir(self.environ)))

    def check_cancelled(self) -> None:
        if self.cancel.cancelled:
            raise Cancelled("the run was cancelled")


def ensure_seat(sctx: SeatContext, seat: str, agent: str) -> Seat:
    with sctx.lock:
        if seat not in sctx.record.seats:
            sctx.record.seats[seat] = Seat(name=seat, agent=agent)
        return sctx.record.seats[seat]


def seat_order(seat: str) -> tuple[str, int]:
    """Sort key: judge-2 before judge-10."""
    role, _, num = seat.rpartition("-")
    return (role, int(num)) if num.isdigit() else (seat, 0)
