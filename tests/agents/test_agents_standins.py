"""Each CLI adapter driven against its stand-in executable: argv, sessions, stdin, statuses."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from magi.agents import TurnRequest, TurnStatus, Usage, build_agent
from magi.agents.gemini import PROMPT_TAIL
from magi.model.config import AgentConfig
from magi.testing.standins import KINDS, StandIn, write_standin

PROMPT = "Implement the thing.\nWith a second line."
Expect = Callable[[str, str, str | None, bool], list[str]]


def claude_argv(exe: str, cwd: str, sid: str | None, first: bool) -> list[str]:
    head = [exe, "-p", "--output-format", "stream-json", "--verbose"]
    if first:
        return [
            *head,
            "--session-id",
            str(sid),
            "--model",
            "m1",
            "--allowedTools",
            "Bash",
            "--permission-mode",
            "acceptEdits",
            "--extra",
        ]
    return [
        *head,
        "--resume",
        str(sid),
        "--model",
        "m1",
        "--tools",
        "Read,Grep,Glob,Bash",
        "--allowedTools",
        "Bash(git show:*)",
        "Bash(git diff:*)",
        "Bash(git log:*)",
        "--permission-mode",
        "dontAsk",
        "--extra",
    ]


def codex_argv(exe: str, cwd: str, sid: str | None, first: bool) -> list[str]:
    mode = "workspace-write" if first else "read-only"
    head = [
        exe,
        "exec",
        "--json",
        "-s",
        mode,
        "-C",
        cwd,
        "--skip-git-repo-check",
        "-m",
        "m1",
        "-c",
        'approval_policy="never"',
        "--extra",
    ]
    return [*head, "-"] if first else [*head, "resume", str(sid), "-"]


def opencode_argv(exe: str, cwd: str, sid: str | None, first: bool) -> list[str]:
    head = [exe, "run", "--format", "json", "--dir", cwd, "-m", "m1"]
    if first:
        return [*head, "--agent", "build", "--extra"]
    return [*head, "--agent", "plan", "-s", str(sid), "--extra"]


def gemini_argv(exe: str, cwd: str, sid: str | None, first: bool) -> list[str]:
    head = [exe, f"--prompt={PROMPT_TAIL}", "--output-format", "json"]
    if first:
        return [
            *head,
            "--session-id",
            str(sid),
            "-m",
            "m1",
            "--approval-mode",
            "yolo",
            "--skip-trust",
            "--extra",
        ]
    return [
        *head,
        "--resume",
        str(sid),
        "-m",
        "m1",
        "--approval-mode",
        "plan",
        "--skip-trust",
        "--extra",
    ]


def antigravity_argv(exe: str, cwd: str, sid: str | None, first: bool) -> list[str]:
    head = [
        exe,
        "-p",
        "--output-format",
        "json",
        "--model",
        "m1",
        "--add-dir",
        cwd,
        "--print-timeout",
        "30s",
    ]
    if first:
        return [*head, "--dangerously-skip-permissions", "--extra"]
    return [*head, "--conversation", str(sid), "--extra"]


def command_argv(exe: str, cwd: str, sid: str | None, first: bool) -> list[str]:
    return [
        exe,
        "--prompt-file",
        "<prompt file>",
        f"--cwd={cwd}",
        "--label",
        "B",
        "--session",
        "" if first else str(sid),
        "--extra",
    ]


EXPECTED: dict[str, Expect] = {
    "claude": claude_argv,
    "codex": codex_argv,
    "opencode": opencode_argv,
    "gemini": gemini_argv,
    "antigravity": antigravity_argv,
    "command": command_argv,
}


def request(
    cwd: Path,
    *,
    write: bool = True,
    session: str | None = None,
    environ: dict[str, str] | None = None,
) -> TurnRequest:
    return TurnRequest(
        seat="impl-B",
        prompt=PROMPT,
        cwd=cwd,
        allow_write=write,
        timeout=30,
        session_id=session,
        run_id="r1",
        node="implement",
        turn=2,
        label="B",
        environ=dict(os.environ) if environ is None else environ,
    )


@pytest.fixture
def work(tmp_path: Path) -> Path:
    cwd = tmp_path / "work"
    cwd.mkdir()
    return cwd


def standin(tmp_path: Path, kind: str, **options: Any) -> StandIn:
    return write_standin(tmp_path / "bin", kind, reply=f"reply from {kind}", **options)


def normalised(argv: list[str]) -> list[str]:
    # The command kind's prompt file is a fresh temp path each turn; the rest is exact.
    return ["<prompt file>" if a.startswith("/") and "magi-prompt-" in a else a for a in argv]


@pytest.mark.parametrize("kind", KINDS)
def test_first_turn_then_resume_with_the_reported_session(
    kind: str, tmp_path: Path, work: Path
) -> None:
    """Exact argv of a writable first turn and a read-only resumed turn; replies and usage."""
    s = standin(tmp_path, kind)
    agent = build_agent(s.agent_config(model="m1", args=["--extra"]))

    first = agent.run_turn(request(work))
    assert first.status is TurnStatus.OK, first.error
    assert first.text == f"reply from {kind}"
    assert first.session_id
    if kind in ("claude", "gemini"):
        assert uuid.UUID(first.session_id).version == 4  # minted by magi
    second = agent.run_turn(request(work, write=False, session=first.session_id))
    assert second.status is TurnStatus.OK, second.error
    assert second.session_id == first.session_id

    calls = s.calls()
    expect = EXPECTED[kind]
    assert normalised(calls[0]["argv"]) == expect(str(s.path), str(work), first.session_id, True)
    assert normalised(calls[1]["argv"]) == expect(str(s.path), str(work), first.session_id, False)
    for call in calls:
        assert Path(call["cwd"]) == work.resolve()
        assert call["stdin"] == PROMPT  # every CLI reads the prompt from stdin
    if kind not in ("antigravity", "command"):
        assert first.usage.output_tokens == 20


def test_usage_is_read_from_each_cli_shape(tmp_path: Path, work: Path) -> None:
    """Tokens and cost land in Usage: claude's result, opencode's summed steps."""
    claude = build_agent(standin(tmp_path / "c", "claude").agent_config())
    assert claude.run_turn(request(work)).usage == Usage(
        input_tokens=100, output_tokens=20, cached_tokens=50, cost_usd=0.0123
    )
    opencode = build_agent(standin(tmp_path / "o", "opencode").agent_config())
    assert opencode.run_turn(request(work)).usage == Usage(
        input_tokens=100, output_tokens=20, cached_tokens=50, cost_usd=0.02
    )


@pytest.mark.parametrize("kind", KINDS)
def test_the_real_rate_limit_signal_gives_quota(kind: str, tmp_path: Path, work: Path) -> None:
    """Each stand-in's quota mode prints its CLI's real rate-limit signal."""
    s = standin(tmp_path, kind, mode="quota")
    result = build_agent(s.agent_config()).run_turn(request(work))
    assert result.status is TurnStatus.QUOTA, result.error
    assert result.error


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "command"])
def test_malformed_output_is_an_error_that_says_so(kind: str, tmp_path: Path, work: Path) -> None:
    s = standin(tmp_path, kind, mode="malformed")
    result = build_agent(s.agent_config()).run_turn(request(work))
    assert result.status is TurnStatus.ERROR
    assert result.error is not None
    assert "malformed output" in result.error
    assert result.raw_stdout  # kept for the artifacts


@pytest.mark.parametrize("kind", KINDS)
def test_the_error_mode_is_an_error(kind: str, tmp_path: Path, work: Path) -> None:
    s = standin(tmp_path, kind, mode="error")
    result = build_agent(s.agent_config()).run_turn(request(work))
    assert result.status is TurnStatus.ERROR
    assert result.error


@pytest.mark.parametrize("kind", KINDS)
def test_secrets_never_reach_the_agent(kind: str, tmp_path: Path, work: Path) -> None:
    """Tokens in the run's environment stay out; pass_env'd and env'd variables get in."""
    environ = {
        name: "secret-value"
        for name in (
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "ACTIONS_RUNTIME_TOKEN",
            "MAGI_APP_PRIVATE_KEY",
            "MAGI_HOME",
            "AWS_SECRET_ACCESS_KEY",
        )
    }
    environ |= {"PATH": os.environ["PATH"], "MY_PROVIDER_KEY": "passed"}
    s = standin(tmp_path, kind)
    cfg = s.agent_config(pass_env=["MY_PROVIDER_KEY"], env={"FROM_CONFIG": "1"})
    assert build_agent(cfg).run_turn(request(work, environ=environ)).ok

    env = s.calls()[-1]["env"]
    assert "secret-value" not in env.values()
    assert env["MY_PROVIDER_KEY"] == "passed"
    assert env["FROM_CONFIG"] == "1"
    assert env["MAGI_SEAT"] == "impl-B"
    assert env["MAGI_ALLOW_WRITE"] == "1"
    assert (env["MAGI_RUN"], env["MAGI_NODE"], env["MAGI_TURN"]) == ("r1", "implement", "2")
    assert "PATH" in env


def test_the_agent_environment_comes_from_the_request_not_the_process(
    tmp_path: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass_env'd variable set only in magi's own os.environ does not reach the agent."""
    monkeypatch.setenv("MY_PROVIDER_KEY", "from-os-environ")
    s = standin(tmp_path, "command")
    cfg = s.agent_config(pass_env=["MY_PROVIDER_KEY"])
    environ = {"PATH": os.environ["PATH"], "MY_PROVIDER_KEY": "from-request"}
    assert build_agent(cfg).run_turn(request(work, environ=environ)).ok
    assert s.calls()[-1]["env"]["MY_PROVIDER_KEY"] == "from-request"


def test_read_only_opencode_seat_denies_edits_by_environment(tmp_path: Path, work: Path) -> None:
    s = standin(tmp_path, "opencode")
    agent = build_agent(s.agent_config(env={"OPENCODE_PERMISSION": '{"edit": "allow"}'}))
    agent.run_turn(request(work, write=False))
    agent.run_turn(request(work, write=True))
    read_only, writable = (c["env"] for c in s.calls())
    # magi's setting wins over the config's, so a config cannot make a judge writable
    assert read_only["OPENCODE_PERMISSION"] == (
        '{"edit": "deny", "bash": "deny", "webfetch": "deny"}'
    )
    assert writable["OPENCODE_PERMISSION"] == '{"edit": "allow"}'


def test_claude_unknown_session_is_an_error_that_opens_afresh(tmp_path: Path, work: Path) -> None:
    """'No conversation found' on stderr: error, and no session id to resume next time."""
    s = standin(tmp_path, "claude")
    stale = str(uuid.uuid4())
    result = build_agent(s.agent_config()).run_turn(request(work, session=stale))
    assert result.status is TurnStatus.ERROR
    assert result.error is not None
    assert "unknown session" in result.error
    assert result.session_id is None


def test_a_cli_that_cannot_start_is_an_error_naming_it(work: Path) -> None:
    cfg = AgentConfig(id="c", kind="claude", command=["/nonexistent/bin/claude"])
    result = build_agent(cfg).run_turn(request(work))
    assert result.status is TurnStatus.ERROR
    assert result.error is not None
    assert "/nonexistent/bin/claude" in result.error
