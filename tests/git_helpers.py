"""Shared set-up for the tests of magi's git-level guards: an isolated git, a small repo."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest


def isolate(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """No global or system git config of the machine running the tests; an agent identity."""
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for who in ("AUTHOR", "COMMITTER"):  # what an agent's own commits are made as
        monkeypatch.setenv(f"GIT_{who}_NAME", "Agent")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "agent@example.invalid")


def sh(cwd: Path, *args: str) -> str:
    """git as an agent runs it; its output, stripped."""
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def one_commit_repo(path: Path, files: Mapping[str, str]) -> Path:
    """A repository at ``path`` on ``main`` whose one commit holds ``files``."""
    sh(path.parent, "init", "-q", "-b", "main", str(path))
    for name, text in files.items():
        (path / name).write_text(text)
    sh(path, "add", "-A")
    sh(path, "commit", "-q", "-m", "one")
    return path
