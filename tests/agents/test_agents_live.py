"""Live output: scrubbed lines, the CLIs' signals as recorded, and the stuck-signal watch."""

from __future__ import annotations

from pathlib import Path

import pytest

from magi.agents.claude import SIGNALS as CLAUDE
from magi.agents.codex import SIGNALS as CODEX
from magi.agents.codex import CodexAdapter
from magi.agents.gemini import SIGNALS as GEMINI
from magi.agents.live import Lines, LiveLine, Signals, SignalWatch, scrub
from magi.agents.opencode import SIGNALS as OPENCODE
from magi.agents.opencode import OpencodeAdapter
from magi.model.config import AgentConfig


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_scrub_drops_escapes_and_control_characters_and_caps() -> None:
    assert scrub("\x1b[90m~/.local\x1b[0m \x07bell\ttab  ") == "~/.local bell tab"
    assert scrub("\x1b]0;title\x07shown") == "shown"
    long = scrub("x" * 1000, limit=10)
    assert (len(long), long[-1]) == (10, "…")


def test_lines_split_on_newline_and_carriage_return_across_chunks() -> None:
    seen: list[str] = []
    lines = Lines(seen.append)
    lines.feed(b"first\nsec")
    lines.feed(b"ond\r\rprogress 50%\r")
    lines.feed(b"\n  \nlast without newline")
    assert seen == ["first", "second", "progress 50%"]
    lines.close()
    assert seen[-1] == "last without newline"


# Lines the real CLIs printed offline (docs/agents-verified.md).
RECORDED = [
    (CODEX, "Reconnecting... waiting for network (Connection failed: error sending request)"),
    (
        CODEX,
        "Reconnecting... 2/5 (stream disconnected before completion: failed to lookup "
        "address information: Name does not resolve)",
    ),
    (OPENCODE, "APIError: Cannot connect to API: Unable to connect. Is the computer able"),
    (CLAUDE, "API Error: Unable to connect to API (ConnectionRefused)"),
    (
        GEMINI,
        "Attempt 3 failed. Retrying with backoff... Error: exception TypeError: fetch failed",
    ),
]


@pytest.mark.parametrize(("signals", "line"), RECORDED)
def test_each_cli_names_its_recorded_cannot_reach_line(signals: Signals, line: str) -> None:
    assert signals.classify(line) == "unreachable"


@pytest.mark.parametrize(
    ("signals", "line"),
    [
        (CLAUDE, "Not logged in · Please run /login"),
        (GEMINI, "Please set an Auth method in your /h/.gemini/settings.json or specify"),
    ],
)
def test_recorded_not_logged_in_lines_are_auth(signals: Signals, line: str) -> None:
    assert signals.classify(line) == "auth"


def test_ordinary_output_is_no_signal() -> None:
    assert CODEX.classify("Editing src/app.py to add the retry") is None


def test_watch_is_stuck_after_only_signals_for_the_window() -> None:
    clock = Clock()
    watch = SignalWatch(CODEX, 120, clock)
    watch.see(LiveLine("Reconnecting... 2/5"))
    clock.now += 119
    watch.see(LiveLine("Reconnecting... waiting for network"))
    assert watch.stuck() is None
    clock.now += 1
    assert watch.stuck() == ("unreachable", "Reconnecting... waiting for network")


def test_progress_clears_the_signals_seen_before() -> None:
    clock = Clock()
    watch = SignalWatch(CODEX, 10, clock)
    watch.see(LiveLine("Reconnecting... 2/5"))
    clock.now += 5
    watch.see(LiveLine("Done: wrote the test", progress=True))
    clock.now += 20
    assert (watch.stuck(), watch.current) == (None, None)


def test_neutral_lines_neither_clear_nor_count() -> None:
    clock = Clock()
    watch = SignalWatch(CODEX, 10, clock)
    watch.see(LiveLine("Reconnecting... 2/5"))
    clock.now += 5
    watch.see(LiveLine("WARNING: proceeding, even though we could not create PATH aliases"))
    clock.now += 5
    assert watch.stuck() == ("unreachable", "Reconnecting... 2/5")


def test_a_signal_long_past_is_not_stuck() -> None:
    """Gemini retried once, recovered, and has worked silently since: not stuck."""
    clock = Clock()
    watch = SignalWatch(GEMINI, 120, clock)
    watch.see(LiveLine("Attempt 1 failed. Retrying with backoff... fetch failed"))
    clock.now += 600
    assert watch.stuck() is None


def test_no_window_never_gives_up_but_still_knows_the_signal() -> None:
    clock = Clock()
    watch = SignalWatch(CODEX, None, clock)
    watch.see(LiveLine("Reconnecting... 2/5"))
    clock.now += 10_000
    assert watch.stuck() is None
    assert watch.current == ("unreachable", "Reconnecting... 2/5")


def test_codex_events_read_as_lines_to_show_and_progress() -> None:
    codex = CodexAdapter(AgentConfig(id="c", kind="codex"))
    err = '{"type":"error","message":"Reconnecting... waiting for network"}'
    item = '{"type":"item.completed","item":{"type":"agent_message","text":"Done."}}'
    assert codex.live(err) == LiveLine("Reconnecting... waiting for network")
    assert codex.live(item) == LiveLine("Done.", progress=True)
    assert codex.live('{"type":"thread.started","thread_id":"t"}') == LiveLine(None)
    log = "2026-12-01T07:47:43.844830Z ERROR codex_api::endpoint: failed to connect"
    assert codex.live(log) == LiveLine("ERROR codex_api::endpoint: failed to connect")


def test_opencode_error_event_reads_as_its_name_and_message() -> None:
    opencode = OpencodeAdapter(AgentConfig(id="o", kind="opencode"))
    line = (
        '{"type":"error","sessionID":"ses_1","error":{"name":"APIError",'
        '"data":{"message":"Cannot connect to API: Unable to connect."}}}'
    )
    assert opencode.live(line) == LiveLine("APIError: Cannot connect to API: Unable to connect.")


def test_a_claude_turn_ends_at_the_first_retry_of_a_rejected_key(tmp_path: Path) -> None:
    """A claude that retries a 401 (as 2.1.197 does, for ~170 s) is ended at its first
    api_retry line: an auth failure in claude's words, not a timeout, with no wait for
    ``unreachable_after`` (off here)."""
    import json
    import sys

    from magi.agents.base import TurnRequest, TurnStatus
    from magi.agents.registry import build_agent
    from magi.model.config import AgentConfig

    script = tmp_path / "claude.py"
    retry = {
        "type": "system",
        "subtype": "api_retry",
        "attempt": 1,
        "max_retries": 10,
        "error_status": 401,
        "error": "authentication_failed",
    }
    script.write_text(
        "import sys, time\nsys.stdin.read()\n"
        f"print({json.dumps(json.dumps({'type': 'system', 'subtype': 'init'}))}, flush=True)\n"
        f"print({json.dumps(json.dumps(retry))}, flush=True)\n"
        "time.sleep(600)\n"
    )
    agent = build_agent(AgentConfig(id="cl", kind="claude", command=[sys.executable, str(script)]))
    request = TurnRequest(
        seat="judge-1",
        prompt="judge",
        cwd=tmp_path,
        allow_write=False,
        timeout=60,
        unreachable_after=None,
        environ={"PATH": "/usr/bin:/bin"},
    )
    result = agent.run_turn(request)
    assert result.status is TurnStatus.ERROR, result.error
    assert result.failure == "auth"
    assert "API error 401 (authentication_failed)" in (result.error or "")
