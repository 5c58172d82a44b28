"""`magi doctor` reads the workflow the App dispatches: missing, copied, older, other pin."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from magi.config.source import Source
from magi.config.workflow import PLACEHOLDER, render_workflow, template
from magi.testing.cli import invoke

SHA = "1234567890abcdef1234567890abcdef12345678"
AGENT = '[[agents]]\nid = "sh1"\nkind = "command"\ncommand = ["sh", "-c", "echo ok"]\n'


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    ident = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "HOME": str(tmp_path)}
    ident |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for argv in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "first"]):
        subprocess.run(["git", *argv], cwd=root, env={**os.environ, **ident}, check=True)
    (root / "magi.toml").write_text(AGENT)
    monkeypatch.chdir(root)
    monkeypatch.setenv("MAGI_CONFIG_DIR", str(tmp_path / "machine"))
    monkeypatch.setenv("MAGI_HOME", str(tmp_path / "home"))
    monkeypatch.setattr("magi.config.source.installed_source", lambda: Source("acme/magi", SHA))
    return root


def _problems(*extra: str) -> list[dict[str, str]]:
    res = invoke(["doctor", "--no-auth-check", "--json", *extra])
    return [p for p in json.loads(res.stdout)["problems"] if "workflows/magi.yml" in p["message"]]


def _write(repo: Path, text: str) -> None:
    flow = repo / ".github" / "workflows" / "magi.yml"
    flow.parent.mkdir(parents=True, exist_ok=True)
    flow.write_text(text)


def test_a_workflow_this_magi_wrote_is_fine(repo: Path) -> None:
    _write(repo, render_workflow(Source("acme/magi", SHA)))
    assert _problems() == []


def test_a_missing_workflow_is_said_to_a_runner_only(repo: Path) -> None:
    assert _problems() == []
    [problem] = _problems("--runner")
    assert problem["severity"] == "warning"
    assert "magi init --github" in problem["message"]


def test_the_template_copied_as_is_is_an_error(repo: Path) -> None:
    _write(repo, template())
    [problem] = _problems()
    assert problem["severity"] == "error"
    assert "name no repository" in problem["message"]
    assert PLACEHOLDER not in problem["message"]


def test_an_older_workflow_names_the_inputs_and_the_command(repo: Path) -> None:
    old = render_workflow(Source("acme/magi", SHA))
    start = old.index("      runner-labels:")
    end = old.index("      stage:")
    _write(repo, old[:start] + old[end:])
    said = _problems()
    assert [p["severity"] for p in said] == ["error", "warning"]  # and it was edited
    assert "lacks the inputs runner-labels" in said[0]["message"]
    assert "magi init --github --force" in said[0]["message"]


def test_a_workflow_pinned_to_another_magi_is_warned(repo: Path) -> None:
    _write(repo, render_workflow(Source("acme/magi", "a" * 40)))
    [problem] = _problems()
    assert problem["severity"] == "warning"
    assert f"acme/magi@{'a' * 40}" in problem["message"]
    assert f"this magi is acme/magi@{SHA}" in problem["message"]
