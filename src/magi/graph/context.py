"""What every node is handed: the run record, its store, the config, git and the seated agents."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, Protocol

from magi.agents.base import Agent
from magi.config.model import Config
from magi.core.seating import Seating
from magi.git import Git
from magi.state.model import Event, Run, RunStatus
from magi.state.store import Store


class Stop(Exception):
    """Ends the pipeline with a final status (failed, stalled, held, verified_noop...)."""

    def __init__(self, status: RunStatus, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


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


@dataclass
class Context:
    """Mutable run state plus the ports. ``lock`` guards the record across parallel seats."""

    run: Run
    store: Store
    config: Config
    git: Git
    agents: Mapping[str, Agent]
    seating: Seating
    environ: Mapping[str, str]
    reporter: Reporter = field(default_factory=SilentReporter)
    clock: Callable[[], datetime] = utcnow
    lock: threading.RLock = field(default_factory=threading.RLock)
    cache: dict[str, object] = field(default_factory=dict)  # per-process, never persisted

    @property
    def run_dir(self) -> Path:
        return self.store.run_dir(self.run.id)

    @property
    def roster(self) -> list[str]:
        return [a.id for a in self.config.agents]

    def save(self) -> None:
        """State is written before the next step starts: every node calls this as it goes."""
        with self.lock:
            self.store.save(self.run)

    def event(
        self, node: str, message: str, level: Literal["info", "warn", "error"] = "info"
    ) -> None:
        with self.lock:
            self.run.events.append(Event(at=self.clock(), node=node, message=message, level=level))
        self.reporter.note(message, level)

    def worktree_root(self) -> Path:
        root = self.run.worktree_root
        assert root is not None, "create_run sets it"  # noqa: S101 - invariant of every record
        return Path(root)


def seat_order(seat: str) -> tuple[str, int]:
    """Sort key: judge-2 before judge-10."""
    role, _, num = seat.rpartition("-")
    return (role, int(num)) if num.isdigit() else (seat, 0)
