"""Turns of CLIs that are offline or logged out, driven against stand-ins that behave so."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from magi.agents import CancelToken, TurnRequest, TurnStatus, build_agent
from magi.agents.process import run
from magi.model.config import AgentConfig
from magi.testing.standins import process_gone, write_standin


def request(cwd: Path, **fields: object) -> TurnRequest:
    base: dict[str, object] = {
        "seat": "impl-A",
        "prompt": "do it",
        "cwd": cwd,
        "allow_write": True,
        "timeout": 60,
        "environ": {"PATH": os.environ["PATH"]},
    }
    return TurnRequest(**{**base, **fields})  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["codex", "gemini"])
def test_a_cli_reconnecting_forever_ends_as_an_unreachable_error(kind: str, tmp_path: Path) -> None:
    """Only reconnect lines for unreachable_after seconds: an error in the CLI's own words."""
    s = write_standin(tmp_path, kind, mode="offline", signal_every=0.05)
    result = build_agent(s.agent_config()).run_turn(request(tmp_path, unreachable_after=0.3))
    assert (result.status, result.failure) == (TurnStatus.ERROR, "unreachable")
    assert result.error is not None
    assert ("waiting for network" if kind == "codex" else "fetch failed") in result.error
    assert "nothing else for 0.3 s" in result.error
    assert all(process_gone(p) for p in s.pids())


@pytest.mark.parametrize(
    ("kind", "words"),
    [("claude", "Unable to connect to API"), ("opencode", "Cannot connect to API")],
)
def test_a_connection_error_after_a_delay_is_marked_unreachable(
    kind: str, words: str, tmp_path: Path
) -> None:
    s = write_standin(tmp_path, kind, mode="offline", delay=0.2)
    result = build_agent(s.agent_config()).run_turn(request(tmp_path))
    assert (result.status, result.failure) == (TurnStatus.ERROR, "unreachable")
    assert result.error is not None
    assert words in result.error


@pytest.mark.parametrize("kind", ["claude", "codex", "opencode", "gemini"])
def test_a_logged_out_turn_is_marked_auth(kind: str, tmp_path: Path) -> None:
    s = write_standin(tmp_path, kind, mode="logged_out")
    result = build_agent(s.agent_config()).run_turn(request(tmp_path))
    assert (result.status, result.failure) == (TurnStatus.ERROR, "auth")


def test_an_ordinary_error_has_no_failure_mark(tmp_path: Path) -> None:
    s = write_standin(tmp_path, "codex", mode="error")
    result = build_agent(s.agent_config()).run_turn(request(tmp_path))
    assert (result.status, result.failure) == (TurnStatus.ERROR, None)


def test_a_timeout_keeps_the_clis_last_words(tmp_path: Path) -> None:
    """With the watch off, the timeout's reason still quotes what codex said last."""
    s = write_standin(tmp_path, "codex", mode="offline", signal_every=0.05)
    agent = build_agent(s.agent_config())
    result = agent.run_turn(request(tmp_path, timeout=0.5, unreachable_after=None))
    assert result.status is TurnStatus.TIMEOUT
    assert result.error is not None
    assert "no reply within 0.5 s" in result.error
    assert "last words: Reconnecting... waiting for network" in result.error
    assert result.failure == "unreachable"


def test_live_output_reaches_the_listener_scrubbed(tmp_path: Path) -> None:
    seen: list[str] = []
    s = write_standin(tmp_path, "codex", reply="all \x1b[1mdone\x1b[0m")
    result = build_agent(s.agent_config()).run_turn(request(tmp_path, on_output=seen.append))
    assert result.ok
    assert "all done" in seen
    assert "Reading additional input from stdin..." in seen


def test_a_failing_listener_does_not_break_the_turn(tmp_path: Path) -> None:
    def boom(line: str) -> None:
        raise RuntimeError(line)

    s = write_standin(tmp_path, "claude", reply="fine")
    result = build_agent(s.agent_config()).run_turn(request(tmp_path, on_output=boom))
    assert (result.status, result.text) == (TurnStatus.OK, "fine")


def test_cancel_kills_a_running_turn_and_any_started_after(tmp_path: Path) -> None:
    """A token cancelled mid-turn ends that turn; a later turn under it dies at start."""
    token = CancelToken()
    s = write_standin(tmp_path, "claude", mode="hang")
    agent = build_agent(s.agent_config())
    started = threading.Event()
    token_register = token.register

    def register(pgid: int, *, contained: bool = False) -> None:
        token_register(pgid, contained=contained)
        started.set()

    token.register = register  # type: ignore[method-assign]
    results = []
    worker = threading.Thread(
        target=lambda: results.append(agent.run_turn(request(tmp_path, cancel=token, timeout=30)))
    )
    worker.start()
    assert started.wait(30)
    token.cancel()
    worker.join(30)
    (cancelled,) = results
    assert (cancelled.status, cancelled.error) == (
        TurnStatus.ERROR,
        "cancelled: the run was stopped",
    )
    assert token.cancelled
    later = agent.run_turn(request(tmp_path, cancel=token, timeout=30))
    assert later.status is TurnStatus.ERROR  # killed at start, not left to time out


def test_a_cancelled_token_leaves_another_runs_token_alone(tmp_path: Path) -> None:
    """Cancelling one run does not poison the next one's turns."""
    CancelToken().cancel()
    s = write_standin(tmp_path, "claude", reply="still works")
    result = build_agent(s.agent_config()).run_turn(request(tmp_path, cancel=CancelToken()))
    assert (result.status, result.text) == (TurnStatus.OK, "still works")


def test_run_gives_up_when_asked_and_says_why(tmp_path: Path) -> None:
    asked = threading.Event()

    def give_up() -> str | None:
        asked.set()
        return "stuck"

    res = run(
        ["sleep", "60"],
        cwd=tmp_path,
        stdin=None,
        env={"PATH": os.environ["PATH"]},
        timeout=60,
        output_max_bytes=1000,
        give_up=give_up,
        poll_s=0.01,
    )
    assert (res.gave_up, res.timed_out, res.exit_code) == ("stuck", False, None)
    assert asked.is_set()


def test_the_listener_hears_lines_past_the_output_cap(tmp_path: Path) -> None:
    """The record keeps the head; the live view still sees what a flooding CLI said last."""
    seen: list[str] = []
    script = "import sys\nfor i in range(2000): print('line', i)\nprint('the \\x1b[31mend\\x1b[0m')"
    res = run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        stdin=None,
        env={},
        timeout=30,
        output_max_bytes=1000,
        on_output=seen.append,
    )
    assert res.stdout_dropped > 0
    assert "the end" not in res.stdout
    assert (seen[0], seen[-1], len(seen)) == ("line 0", "the end", 2001)
    assert res.gave_up is None


def test_an_error_after_only_signals_is_marked_by_the_signal(tmp_path: Path) -> None:
    """codex exits 1, its error not naming the cause, after only a connect failure: unreachable."""
    script = tmp_path / "codex"
    script.write_text(
        "#!/bin/sh\n"
        "echo 'ERROR codex_api: failed to connect to Responses WebSocket' >&2\n"
        "printf 'shutting down\\nflushing\\nfatal: gave up\\n' >&2\nexit 1\n"
    )
    script.chmod(0o755)
    cfg = AgentConfig(id="c", kind="codex", command=[str(script)])
    result = build_agent(cfg).run_turn(request(tmp_path))
    assert (result.status, result.failure) == (TurnStatus.ERROR, "unreachable")
