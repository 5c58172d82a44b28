"""Shared fixtures: the graph tests' scratch repo and scripted dir, a live magi, a clean git."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from git_helpers import isolate
from graph_helpers import LiveRun, scratch_repo
from magi.testing import inprocess

# The demo's personas as in-process seats (kind = "scripted"): graph_helpers.config sits
# them so, and a run resumed in this process builds them again from its record's config.
inprocess.register()


@pytest.fixture
def env(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(repo, MAGI_HOME, the scripted agents' log and marker directory)."""
    scripted = tmp_path / "scripted"
    scripted.mkdir()
    return scratch_repo(tmp_path), tmp_path / "home", scripted


@pytest.fixture
def isolated_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No git config of the machine reaches the test; commits carry an agent identity."""
    isolate(monkeypatch, tmp_path / "home")


@pytest.fixture
def live_run(tmp_path: Path) -> Iterator[Callable[[dict[str, str], dict[str, str]], LiveRun]]:
    """Makes the test's ``LiveRun`` (implementers, judges); kills what it left at teardown."""
    made: list[LiveRun] = []

    def make(personas: dict[str, str], judges: dict[str, str]) -> LiveRun:
        made.append(LiveRun(tmp_path, personas, judges))
        return made[-1]

    yield make
    for live in made:
        live.close()
