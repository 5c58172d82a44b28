"""Fixtures shared by the graph tests: a scratch repo with a bare remote, and a scripted dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph_helpers import scratch_repo


@pytest.fixture
def env(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(repo, MAGI_HOME, the scripted agents' log and marker directory)."""
    scripted = tmp_path / "scripted"
    scripted.mkdir()
    return scratch_repo(tmp_path), tmp_path / "home", scripted
