"""`magi doctor --runner`'s checks one by one (``magi.engine.runner_check``): each says what
is wrong on this machine and what to do, at the level a runner needs."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from magi.engine import runner_check
from magi.engine.diagnose import Diagnosis


def _bin(tmp: Path, **versions: str) -> str:
    """A PATH whose tools print ``versions`` for ``--version`` (a missing tool: not there)."""
    d = tmp / "bin"
    d.mkdir(parents=True, exist_ok=True)
    for tool, said in versions.items():
        path = d / tool
        path.write_text(f"#!/bin/sh\necho '{said}'\n")
        path.chmod(0o755)
    return str(d)


def _said(tmp: Path, monkeypatch: pytest.MonkeyPatch, **versions: str) -> list[tuple[str, str]]:
    env = {"PATH": _bin(tmp, **versions), "MAGI_HOME": str(tmp / "home")}
    (tmp / "home").mkdir(exist_ok=True)
    d = Diagnosis()
    runner_check.check_runner(d, env, ["self-hosted"])
    return [(p.severity, p.message) for p in d.problems]


def _errors(said: list[tuple[str, str]]) -> str:
    return " | ".join(m for level, m in said if level == "error")


def test_pythons_and_gits_too_old_or_missing_are_errors(tmp_path, monkeypatch) -> None:
    fine = _said(tmp_path, monkeypatch, python3="Python 3.12.1", git="git version 2.43.0")
    assert "python3" not in _errors(fine)
    assert "git" not in _errors(fine)
    old = _said(tmp_path / "o", monkeypatch, python3="Python 3.10.12", git="git version 2.34.1")
    assert "python3 is 3.10.12: magi needs 3.11 or newer" in _errors(old)
    assert "action's `python`" not in _errors(old)  # no input the generated workflow has
    assert "runner's PATH as python3" in _errors(old)
    assert "git 2.34.1: magi needs 2.38 or newer" in _errors(old)
    gone = _said(tmp_path / "g", monkeypatch)
    assert "python3 is not on this user's PATH" in _errors(gone)
    assert "git is not on this user's PATH" in _errors(gone)


def test_a_small_disk_and_root_are_warned(tmp_path, monkeypatch) -> None:
    tools = {"python3": "Python 3.12.1", "git": "git version 2.43.0"}
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(
        runner_check.shutil, "disk_usage", lambda _p: SimpleNamespace(free=100 * 1024**3)
    )
    roomy = dict(_said(tmp_path, monkeypatch, **tools))
    assert not [m for m in roomy.values() if "GiB free" in m or "running as root" in m]
    monkeypatch.setattr(
        runner_check.shutil, "disk_usage", lambda _p: SimpleNamespace(free=2 * 1024**3)
    )
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    said = [m for level, m in _said(tmp_path / "s", monkeypatch, **tools) if level == "warning"]
    assert any("2.0 GiB free under" in m and "wants 5 GiB" in m for m in said), said
    assert any("running as root" in m for m in said), said
