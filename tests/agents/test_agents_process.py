"""The shared runner: process groups, timeouts, output caps, the environment allowlist."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from magi.agents import TurnRequest, TurnStatus, child_env
from magi.agents.claude import ClaudeAdapter
from magi.agents.cli import CliAgent
from magi.agents.command import CommandAdapter
from magi.agents.process import run
from magi.model.config import AgentConfig
from magi.testing.standins import StandIn, process_gone, write_standin


def wait_gone(pids: list[int], deadline_s: float = 10.0) -> list[int]:
    """The pids still alive when the deadline passes (none, if the group was killed)."""
    deadline = time.monotonic() + deadline_s
    alive = [p for p in pids if not process_gone(p)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.02)  # polling a condition, bounded by the deadline
        alive = [p for p in alive if not process_gone(p)]
    return alive


def request(cwd: Path, *, timeout: float = 30, session: str | None = None) -> TurnRequest:
    return TurnRequest(
        seat="fix",
        prompt="fix it",
        cwd=cwd,
        allow_write=True,
        timeout=timeout,
        session_id=session,
        label="A",
        environ=dict(os.environ),
    )


def agent_for(s: StandIn, *, cap: int = 4_000_000) -> CliAgent:
    cfg = s.agent_config()
    adapter = ClaudeAdapter(cfg) if s.kind == "claude" else CommandAdapter(cfg)
    return CliAgent(cfg, adapter, output_max_bytes=cap, kill_grace=0.5)


@pytest.mark.parametrize("ignore_term", [False, True], ids=["sigterm", "sigkill"])
def test_timeout_kills_the_whole_process_group(tmp_path: Path, ignore_term: bool) -> None:
    """A hung CLI and the child it spawned are both gone after the turn times out."""
    s = write_standin(tmp_path, "claude", mode="hang", ignore_term=ignore_term)
    result = agent_for(s).run_turn(request(tmp_path, timeout=1))
    assert result.status is TurnStatus.TIMEOUT
    assert result.error is not None
    assert "process group was killed" in result.error
    pids = s.pids()
    assert len(pids) == 2  # the stand-in and its grandchild
    assert wait_gone(pids) == []


def test_children_left_behind_after_a_normal_exit_are_killed(tmp_path: Path) -> None:
    """A child holding stdout open neither blocks the turn nor outlives it."""
    s = write_standin(tmp_path, "command", mode="linger", reply="finished")
    result = agent_for(s).run_turn(request(tmp_path))
    assert result.status is TurnStatus.OK
    assert result.text == "finished"
    grandchild = s.pids()[1]
    assert wait_gone([grandchild]) == []


def test_output_past_the_cap_keeps_the_head_and_is_marked(tmp_path: Path) -> None:
    s = write_standin(tmp_path, "command", mode="flood", flood_bytes=50_000)
    result = agent_for(s, cap=10_000).run_turn(request(tmp_path))
    assert result.raw_stdout.startswith("x" * 10_000)
    assert result.raw_stdout.endswith("\n[... 40000 bytes truncated by magi ...]")
    assert "x" * 10_001 not in result.raw_stdout
    assert result.raw_stderr.endswith("\n[... 40000 bytes truncated by magi ...]")


def test_a_truncated_json_reply_says_it_was_truncated(tmp_path: Path) -> None:
    s = write_standin(tmp_path, "claude", mode="flood", flood_bytes=50_000)
    result = agent_for(s, cap=1_000).run_turn(request(tmp_path))
    assert result.status is TurnStatus.ERROR
    assert result.error is not None
    assert "truncated" in result.error


def test_command_placeholders_env_and_temporary_prompt_file(tmp_path: Path) -> None:
    """{prompt_file} {cwd} {label} {session} are filled per argument; the temp file goes."""
    s = write_standin(tmp_path / "bin", "command", reply="ok", session_id="conv-7")
    work = tmp_path / "my work"  # a space: one argument each, no shell involved
    work.mkdir()
    agent = agent_for(s)
    first = agent.run_turn(request(work))
    second = agent.run_turn(request(work, session=first.session_id))
    assert (first.session_id, second.session_id) == ("conv-7", "conv-7")

    call1, call2 = s.calls()
    prompt_file = call1["argv"][2]
    assert call1["argv"] == [
        str(s.path),
        "--prompt-file",
        prompt_file,
        f"--cwd={work}",
        "--label",
        "A",
        "--session",
        "",
    ]
    assert call2["argv"][-1] == "conv-7"
    assert call1["prompt_file_text"] == "fix it"  # the file existed while the command ran
    assert call1["env"]["MAGI_PROMPT_FILE"] == prompt_file
    assert call1["stdin"] == "fix it"
    assert call2["env"]["MAGI_SESSION"] == "conv-7"
    assert call1["env"]["MAGI_LABEL"] == "A"
    assert not Path(prompt_file).exists()  # removed after the turn


def test_a_given_prompt_file_is_used_and_kept(tmp_path: Path) -> None:
    s = write_standin(tmp_path / "bin", "command")
    stored = tmp_path / "prompt.md"
    stored.write_text("from the artifacts")
    req = TurnRequest(
        seat="fix",
        prompt="from the artifacts",
        cwd=tmp_path,
        allow_write=False,
        timeout=30,
        prompt_file=stored,
        environ=dict(os.environ),
    )
    agent_for(s).run_turn(req)
    call = s.calls()[-1]
    assert call["argv"][2] == str(stored)
    assert call["env"]["MAGI_ALLOW_WRITE"] == "0"
    assert stored.exists()


def test_a_child_that_never_reads_stdin_does_not_block_magi(tmp_path: Path) -> None:
    """A prompt larger than a pipe buffer, unread by the child: the run still completes."""
    script = "import sys; sys.stdout.write('done')"
    res = run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        stdin=b"p" * 2_000_000,
        env={},
        timeout=30,
        output_max_bytes=1000,
    )
    assert (res.stdout, res.exit_code, res.timed_out) == ("done", 0, False)


def test_run_reports_a_missing_executable_instead_of_raising(tmp_path: Path) -> None:
    res = run(
        ["/nonexistent/agent"], cwd=tmp_path, stdin=None, env={}, timeout=5, output_max_bytes=1000
    )
    assert res.start_error is not None
    assert "/nonexistent/agent" in res.start_error


def test_child_env_is_built_from_the_allowlist_only() -> None:
    base = {
        "PATH": "/bin",
        "HOME": "/h",
        "LC_ALL": "C",
        "CODEX_HOME": "/c",
        "XDG_CONFIG_HOME": "/x",
        "GITHUB_TOKEN": "t",
        "GH_TOKEN": "t",
        "ACTIONS_RUNTIME_TOKEN": "t",
        "MAGI_HOME": "/m",
        "MAGI_APP_PRIVATE_KEY": "k",
        "OPENAI_API_KEY": "sk",
        "PYTHONPATH": "/p",
    }
    cfg = AgentConfig(
        id="a",
        kind="codex",
        pass_env=["OPENAI_API_KEY", "UNSET"],
        env={"FOO": "bar", "MAGI_SEAT": "from-config"},
    )
    env = child_env(base, cfg, {"MAGI_SEAT": "judge-1", "MAGI_TURN": "1"})
    assert env == {
        "PATH": "/bin",
        "HOME": "/h",
        "LC_ALL": "C",
        "CODEX_HOME": "/c",
        "XDG_CONFIG_HOME": "/x",
        "OPENAI_API_KEY": "sk",
        "FOO": "bar",
        "MAGI_SEAT": "judge-1",
        "MAGI_TURN": "1",
    }
