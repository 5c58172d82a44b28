"""doctor and preflight ask each agent's CLI whether it is logged in (stand-ins as real CLIs)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from magi.agents.hookspecs import AuthStatus
from magi.core.seats.seating import assign_seats
from magi.engine.diagnose import diagnose
from magi.engine.logins import seats_held
from magi.errors import AgentError
from magi.model.config import AgentConfig, Config
from magi.testing.cli import invoke
from magi.testing.standins import write_standin

ROSTER = """\
[[agents]]
id = "claude"
kind = "claude"

[[agents]]
id = "codex"
kind = "codex"

[[agents]]
id = "mock"
kind = "command"
command = ["sh", "-c", "echo hi"]

[graph]
candidates = 2
judges = 2
"""
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    """A PATH holding git, sh, and claude and codex stand-ins (logged in unless changed)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("git", "sh"):
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    for kind in ("claude", "codex"):
        write_standin(bin_dir, kind, logged_in=True)
    return bin_dir


@pytest.fixture
def env(tmp_path: Path, bin_dir: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str | None]:
    root = tmp_path / "repo"
    root.mkdir()
    run_env = {**os.environ, **GIT_ENV, "HOME": str(tmp_path)}
    for argv in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "first"]):
        subprocess.run(["git", *argv], cwd=root, env=run_env, check=True)
    (root / ".magi").mkdir()
    (root / ".magi" / "config.toml").write_text(ROSTER)
    monkeypatch.chdir(root)
    (tmp_path / "machine").mkdir()
    return {
        "PATH": str(bin_dir),
        "HOME": str(tmp_path),
        "MAGI_HOME": str(tmp_path / "magi-home"),
        "MAGI_CONFIG_DIR": str(tmp_path / "machine"),
        "COLUMNS": "300",
        "ANTHROPIC_API_KEY": None,
        "OPENAI_API_KEY": None,
        **GIT_ENV,
    }


def log_out(bin_dir: Path, kind: str) -> None:
    config = bin_dir / f"{kind}.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "logged_in": False}))


def test_doctor_with_everyone_logged_in_finds_no_problem(env: dict) -> None:
    result = invoke(["doctor"], env=env)
    assert result.exit_code == 0, result.stdout
    assert "login: logged in (ANTHROPIC_API_KEY)" in result.stdout
    assert "login: API key configured" in result.stdout


def test_a_logged_out_seat_is_a_problem_naming_its_seats_and_the_fix(
    env: dict, bin_dir: Path
) -> None:
    log_out(bin_dir, "claude")
    result = invoke(["doctor"], env=env)
    assert result.exit_code == AgentError.exit_code
    out = " ".join(result.stdout.split())
    assert "claude (seat implementer 1, review-1): not logged in; run `claude auth login`" in out
    assert "problems: none" not in out


def test_doctor_json_carries_each_login(env: dict, bin_dir: Path) -> None:
    log_out(bin_dir, "codex")
    data = json.loads(invoke(["doctor", "--json"], env=env).stdout)
    assert data["auth"]["codex"]["ok"] is False
    assert data["auth"]["claude"]["ok"] is True
    assert "mock" not in data["auth"]  # a command agent has no login to check
    assert any("codex (seat" in p["message"] for p in data["problems"])


def test_no_auth_check_skips_the_status_commands(env: dict, bin_dir: Path) -> None:
    log_out(bin_dir, "claude")
    result = invoke(["doctor", "--no-auth-check"], env=env)
    assert result.exit_code == 0, result.stdout
    calls = (bin_dir / "claude.log.jsonl").read_text().splitlines()
    assert [json.loads(c)["argv"][1:] for c in calls] == [["--version"]]  # never asked to log in


def test_run_refuses_to_start_with_a_logged_out_seat(env: dict, bin_dir: Path) -> None:
    """Preflight lists the login problem; nothing is implemented."""
    log_out(bin_dir, "codex")
    result = invoke(["run", "add a README"], env=env)
    assert result.exit_code != 0
    assert "codex (seat implementer 2, judge-1, review-2): not logged in" in result.output
    calls = (bin_dir / "codex.log.jsonl").read_text().splitlines()
    assert {tuple(json.loads(c)["argv"][1:]) for c in calls} == {
        ("--version",),
        ("login", "status"),
    }


def test_an_unseated_agent_logged_out_is_only_a_warning(
    tmp_path: Path, bin_dir: Path, env: dict
) -> None:
    log_out(bin_dir, "codex")
    config = tmp_path / "one.toml"
    # claude, mock, codex: one implementer (claude), one judge (mock), reviewers claude, mock.
    first, codex_entry, rest = ROSTER.partition('[[agents]]\nid = "codex"\nkind = "codex"\n\n')
    roster = first + rest.replace("[graph]", codex_entry + "[graph]")
    config.write_text(
        roster.replace("candidates = 2", "candidates = 1").replace("judges = 2", "judges = 1")
    )
    d = diagnose(Path.cwd(), config, {k: v for k, v in env.items() if v is not None})
    assert d.auth["codex"] == AuthStatus(
        False,
        "not logged in",
        "run `codex login` (or `codex login --with-api-key`, or pass CODEX_API_KEY)",
    )
    said = [p for p in d.problems if "codex" in p.message and "egress proxy" not in p.message]
    assert [p.severity for p in said] == ["warning"]


def test_seats_held_names_slots_not_labels() -> None:
    cfg = Config.model_validate(
        {
            "agents": [
                AgentConfig(id="a", kind="command", command=["x"]),
                AgentConfig(id="b", kind="command", command=["x"]),
            ],
            "graph": {"candidates": 2, "judges": 2},
            "roles": {"fixer": "b"},
        }
    )
    seating = assign_seats(cfg)
    held_a, held_b = seats_held("a", seating), seats_held("b", seating)
    assert held_a[:2] == ["implementer 1", "judge-2"]
    assert held_b[:2] == ["implementer 2", "judge-1"]
    assert held_b[-1] == "fix"
