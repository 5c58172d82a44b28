"""Login checks through each CLI's status command, against stand-ins printing the real output."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from magi.agents import auth, kinds
from magi.agents.hookspecs import AuthStatus
from magi.agents.process import child_env
from magi.model.config import AgentConfig
from magi.testing import inprocess
from magi.testing.standins import write_standin

PATH = {"PATH": os.environ["PATH"]}
AGENT_GEMINI = AgentConfig(id="g", kind="gemini")


def check(kind: str, tmp_path: Path, *, logged_in: bool, **cfg: object) -> AuthStatus:
    s = write_standin(tmp_path, kind, logged_in=logged_in)
    spec = kinds()[kind]
    assert spec.auth_check is not None
    agent = s.agent_config(**cfg)
    return spec.auth_check(agent, child_env(PATH, agent, {}))


@pytest.mark.parametrize("kind", ["claude", "codex", "opencode"])
def test_a_logged_out_cli_is_not_ok_and_says_how_to_log_in(kind: str, tmp_path: Path) -> None:
    status = check(kind, tmp_path, logged_in=False)
    assert status.ok is False
    assert f"`{kind} auth login`" in status.fix or f"`{kind} login`" in status.fix


@pytest.mark.parametrize(
    ("kind", "detail"),
    [
        ("claude", "logged in (ANTHROPIC_API_KEY)"),
        ("codex", "API key configured"),
        ("opencode", "1 credential(s) in `opencode auth list`"),
    ],
)
def test_a_logged_in_cli_is_ok(kind: str, detail: str, tmp_path: Path) -> None:
    status = check(kind, tmp_path, logged_in=True)
    assert (status.ok, status.detail) == (True, detail)


def test_codex_status_never_repeats_the_key_fragment(tmp_path: Path) -> None:
    status = check("codex", tmp_path, logged_in=True)
    assert "sk-" not in status.detail


def test_opencode_counts_a_provider_key_passed_to_the_agent(tmp_path: Path) -> None:
    s = write_standin(tmp_path, "opencode", logged_in=False)
    agent = s.agent_config(pass_env=["ANTHROPIC_API_KEY"])
    env = child_env({**PATH, "ANTHROPIC_API_KEY": "sk-x"}, agent, {})
    status = auth.check_opencode(agent, env, key_env_vars=("ANTHROPIC_API_KEY",))
    assert status == AuthStatus(True, "provider key ANTHROPIC_API_KEY passed")
    assert s.calls() == []  # no process needed


def test_the_status_command_runs_in_the_agents_environment(tmp_path: Path) -> None:
    s = write_standin(tmp_path, "claude", logged_in=True)
    agent = s.agent_config(env={"CLAUDE_CONFIG_DIR": "/seat/claude"})
    env = child_env({**PATH, "GITHUB_TOKEN": "secret"}, agent, {})
    auth.check_claude(agent, env)
    call = s.calls()[-1]
    assert call["argv"][1:] == ["auth", "status"]
    assert call["env"]["CLAUDE_CONFIG_DIR"] == "/seat/claude"
    assert "GITHUB_TOKEN" not in call["env"]


def test_a_status_command_that_hangs_is_bounded(tmp_path: Path) -> None:
    fake = tmp_path / "claude-hangs"
    fake.write_text("#!/bin/sh\nexec sleep 60\n")
    fake.chmod(0o755)
    agent = AgentConfig(id="c", kind="claude", command=[str(fake)])
    status = auth.check_claude(agent, PATH, 0.3)
    assert status.ok is None
    assert "did not answer within 0.3 s" in status.detail


def test_a_missing_cli_is_unknown_not_logged_out() -> None:
    agent = AgentConfig(id="c", kind="codex", command=["/nonexistent/codex"])
    status = auth.check_codex(agent, PATH)
    assert status.ok is None
    assert "could not run `codex login status`" in status.detail


def gemini_env(home: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(home), **extra}


def test_gemini_without_settings_or_key_is_not_ok(tmp_path: Path) -> None:
    status = auth.check_gemini(AGENT_GEMINI, gemini_env(tmp_path))
    assert status.ok is False
    assert "settings.json: it does not exist" in status.detail
    assert "GEMINI_API_KEY" in status.fix


def test_gemini_with_an_auth_method_in_settings_is_ok(tmp_path: Path) -> None:
    settings = tmp_path / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(
        '{\n  // comment\n  "security": {"auth": {"selectedType": "gemini-api-key"}}}'
    )
    status = auth.check_gemini(AGENT_GEMINI, gemini_env(tmp_path, GEMINI_API_KEY="k"))
    assert status.ok is True
    assert "gemini-api-key" in status.detail
    # Without the key only a key gemini stored itself would do: not known, not refused.
    assert auth.check_gemini(AGENT_GEMINI, gemini_env(tmp_path)).ok is None


def test_gemini_google_login_without_stored_credentials_is_not_ok(tmp_path: Path) -> None:
    settings = tmp_path / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"security": {"auth": {"selectedType": "oauth-personal"}}}')
    assert auth.check_gemini(AGENT_GEMINI, gemini_env(tmp_path)).ok is False
    (tmp_path / ".gemini" / "oauth_creds.json").write_text("{}")
    assert auth.check_gemini(AGENT_GEMINI, gemini_env(tmp_path)).ok is True


def test_gemini_key_in_the_agents_environment_is_ok(tmp_path: Path) -> None:
    status = auth.check_gemini(AGENT_GEMINI, gemini_env(tmp_path, GEMINI_API_KEY="k"))
    assert status == AuthStatus(True, "GEMINI_API_KEY is set")


def test_gemini_settings_are_found_under_gemini_cli_home(tmp_path: Path) -> None:
    settings = tmp_path / "alt" / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"security": {"auth": {"selectedType": "vertex-ai"}}}')
    env = gemini_env(tmp_path, GEMINI_CLI_HOME=str(tmp_path / "alt"), GOOGLE_API_KEY="k")
    assert auth.check_gemini(AGENT_GEMINI, env).ok is True
    # Vertex without its project or key is refused by gemini before any request.
    del env["GOOGLE_API_KEY"]
    assert auth.check_gemini(AGENT_GEMINI, env).ok is False


def test_gemini_base_url_without_settings_is_refused_as_gemini_refuses_it(
    tmp_path: Path,
) -> None:
    """GOOGLE_GEMINI_BASE_URL with no settings.json makes headless gemini 0.61.0 pick the
    "gateway" method and refuse it ("Invalid auth method selected", exit 41): an error, with
    the settings that work; with them (and the key) it is a login."""
    env = gemini_env(tmp_path, GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:9/", GEMINI_API_KEY="k")
    status = auth.check_gemini(AGENT_GEMINI, env)
    assert status.ok is False
    assert "gateway" in status.detail
    assert "gemini-api-key" in status.fix
    settings = tmp_path / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"security": {"auth": {"selectedType": "gemini-api-key"}}}')
    assert auth.check_gemini(AGENT_GEMINI, env).ok is True


def test_antigravity_is_said_to_be_unchecked() -> None:
    status = auth.check_antigravity(AGENT_GEMINI, {})
    assert status.ok is None
    assert "not checked" in status.detail


def test_command_agents_have_no_login_check() -> None:
    assert kinds()["command"].auth_check is None
    # The test kit's in-process personas (registered by the suite's conftest) log in nowhere.
    logins = [k for k in kinds() if k not in ("command", inprocess.KIND)]
    assert logins
    assert all(kinds()[k].auth_check is not None for k in logins)


def test_codex_key_variables_count_and_openai_key_alone_is_refused(tmp_path: Path) -> None:
    """CODEX_API_KEY is a login to `codex exec`; OPENAI_API_KEY alone is not: codex 0.171
    sends no credential with it (401 on every request), so doctor says no, with the fix."""
    s = write_standin(tmp_path, "codex", logged_in=False)
    agent = s.agent_config()
    assert auth.check_codex(agent, {**PATH, "CODEX_API_KEY": "k"}) == AuthStatus(
        True, "CODEX_API_KEY is set"
    )
    assert s.calls() == []
    status = auth.check_codex(agent, {**PATH, "OPENAI_API_KEY": "k"})
    assert status.ok is False
    assert "OPENAI_API_KEY alone is no login" in status.detail
    assert "CODEX_API_KEY" in status.fix
