"""Shared fixtures: the graph tests' scratch repo and scripted dir, and an isolated git."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_helpers import isolate
from graph_helpers import scratch_repo


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
