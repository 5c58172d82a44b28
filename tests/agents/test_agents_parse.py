"""The adapters' pure halves: argv building and output parsing, without processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from magi.agents import TurnRequest, TurnStatus, Usage
from magi.agents.antigravity import AntigravityAdapter
from magi.agents.claude import ClaudeAdapter
from magi.agents.codex import CodexAdapter
from magi.agents.command import CommandAdapter
from magi.agents.gemini import PROMPT_TAIL, GeminiAdapter
from magi.agents.opencode import OpencodeAdapter
from magi.model.config import AgentConfig

REQ = TurnRequest(seat="judge-1", prompt="judge", cwd=Path("/w"), allow_write=False, timeout=90.5)


def cfg(kind: str, **fields: object) -> AgentConfig:
    return AgentConfig(id="a", kind=kind, **fields)


def lines(*events: object) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def test_config_command_replaces_the_executable_and_keeps_leading_args() -> None:
    inv = ClaudeAdapter(cfg("claude", command=["npx", "claude"])).build(REQ, "sid")
    assert inv.argv[:3] == ["npx", "claude", "-p"]
    # stream-json (what a turn is doing, as it goes) runs only with --verbose.
    assert inv.argv[3:6] == ["--output-format", "stream-json", "--verbose"]
    assert inv.stdin == b"judge"


def test_claude_quota_from_the_result_text_alone() -> None:
    out = json.dumps(
        {
            "type": "result",
            "is_error": True,
            "api_error_status": None,
            "result": "API Error: Request rejected (429) · slow down",
            "session_id": "s1",
        }
    )
    parsed = ClaudeAdapter(cfg("claude")).parse(out, "", 1, REQ)
    assert (parsed.status, parsed.session_id) == (TurnStatus.QUOTA, "s1")


def test_claude_failed_first_turn_without_json_returns_no_session() -> None:
    parsed = ClaudeAdapter(cfg("claude")).parse("", "Error: Invalid session ID.\n", 1, REQ)
    assert parsed.status is TurnStatus.ERROR
    assert parsed.session_id is None
    assert parsed.error == "claude exited 1: Error: Invalid session ID."


def test_codex_error_event_then_completed_turn_is_ok() -> None:
    out = lines(
        {"type": "thread.started", "thread_id": "t1"},
        {"type": "error", "message": "Reconnecting... 1/5"},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "fine"}},
        {"type": "turn.completed", "usage": {"input_tokens": 3, "output_tokens": 4}},
    )
    parsed = CodexAdapter(cfg("codex")).parse(out, "", 0, REQ)
    assert (parsed.status, parsed.text, parsed.session_id) == (TurnStatus.OK, "fine", "t1")
    assert parsed.usage == Usage(input_tokens=3, output_tokens=4, cached_tokens=None, cost_usd=None)


@pytest.mark.parametrize(
    "message",
    [
        "You’ve hit your usage limit. Upgrade to Plus.",  # the real curly apostrophe
        "exceeded retry limit, last status: 429 Too Many Requests",
        "Usage limit reached. You've reached your usage limit.",
    ],
)
def test_codex_quota_messages(message: str) -> None:
    out = lines({"type": "turn.failed", "error": {"message": message}})
    assert CodexAdapter(cfg("codex")).parse(out, "", 1, REQ).status is TurnStatus.QUOTA


def test_codex_exit_zero_without_a_reply_is_an_error() -> None:
    out = lines({"type": "thread.started", "thread_id": "t1"}, {"type": "turn.completed"})
    parsed = CodexAdapter(cfg("codex")).parse(out, "", 0, REQ)
    assert (parsed.status, parsed.error) == (TurnStatus.ERROR, "codex: no agent_message item")


def test_opencode_reply_falls_back_to_the_last_text_part() -> None:
    """A last step with no text (ended on tool calls) still yields the last text seen."""
    out = lines(
        {"type": "step_start", "sessionID": "ses_1"},
        {"type": "text", "sessionID": "ses_1", "part": {"text": "the answer"}},
        {"type": "step_finish", "part": {"cost": 0.5, "tokens": {"input": 1, "output": 2}}},
        {"type": "step_start", "sessionID": "ses_1"},
    )
    parsed = OpencodeAdapter(cfg("opencode")).parse(out, "", 0, REQ)
    assert (parsed.status, parsed.text, parsed.session_id) == (TurnStatus.OK, "the answer", "ses_1")
    assert parsed.usage == Usage(input_tokens=1, output_tokens=2, cached_tokens=None, cost_usd=0.5)


def test_opencode_read_only_sets_the_permission_env_and_plan_agent() -> None:
    inv = OpencodeAdapter(cfg("opencode")).build(REQ, None)
    assert inv.argv[inv.argv.index("--agent") + 1] == "plan"
    assert json.loads(inv.extra_env["OPENCODE_PERMISSION"]) == {
        "edit": "deny",
        "bash": "deny",
        "webfetch": "deny",
    }


def test_gemini_quota_by_status_name_in_the_stdout_error() -> None:
    out = json.dumps(
        {
            "session_id": "g1",
            "response": "",
            "error": {
                "type": "ApiError",
                "message": "[API Error: x (Status: RESOURCE_EXHAUSTED)]",
                "code": 1,
            },
        }
    )
    parsed = GeminiAdapter(cfg("gemini")).parse(out, "", 1, REQ)
    assert (parsed.status, parsed.session_id) == (TurnStatus.QUOTA, "g1")


def test_gemini_prompt_goes_on_stdin_never_in_argv() -> None:
    """A dash-led or huge prompt stays off the command line (gemini appends --prompt to stdin)."""
    prompt = "- item\n--model x\n" + "é" * 100_000
    req = TurnRequest(seat="s", prompt=prompt, cwd=Path("/w"), allow_write=True, timeout=1)
    inv = GeminiAdapter(cfg("gemini")).build(req, "sid")
    assert inv.stdin == prompt.encode()
    assert inv.argv[:2] == ["gemini", f"--prompt={PROMPT_TAIL}"]
    assert not any("item" in a for a in inv.argv)


def test_antigravity_print_timeout_covers_the_node_budget() -> None:
    inv = AntigravityAdapter(cfg("antigravity")).build(REQ, None)
    assert inv.argv[inv.argv.index("--print-timeout") + 1] == "91s"
    assert "--dangerously-skip-permissions" not in inv.argv


def test_antigravity_silent_exit_is_explained() -> None:
    parsed = AntigravityAdapter(cfg("antigravity")).parse("", "", 0, REQ)
    assert parsed.status is TurnStatus.ERROR
    assert parsed.error is not None
    assert "not a terminal" in parsed.error


def test_command_substitutes_placeholders_inside_arguments_only() -> None:
    c = cfg(
        "command",
        command=["run", "--in={cwd}/x", "{label}{session}", "{unknown}", "{cwd"],
        args=["{prompt_file}"],
    )
    req = TurnRequest(
        seat="s",
        prompt="p",
        cwd=Path("/w d"),
        allow_write=True,
        timeout=1,
        label="B",
        session_id="s9",
        prompt_file=Path("/p.md"),
    )
    inv = CommandAdapter(c).build(req, None)
    assert inv.argv == ["run", "--in=/w d/x", "Bs9", "{unknown}", "{cwd", "/p.md"]


def test_command_success_mentioning_quota_is_still_a_success() -> None:
    c = cfg("command", command=["x"])
    parsed = CommandAdapter(c).parse("  the reply \n", "quota: 10% used\n", 0, REQ)
    assert (parsed.status, parsed.text) == (TurnStatus.OK, "the reply")


def test_command_session_line_is_protocol_not_part_of_the_error() -> None:
    """A failing command that reported its session: the id is kept, the error reads clean."""
    c = cfg("command", command=["x"])
    parsed = CommandAdapter(c).parse("", "MAGI-SESSION: s-1\nboom: disk full\n", 3, REQ)
    assert parsed.status is TurnStatus.ERROR
    assert parsed.session_id == "s-1"
    assert parsed.error is not None
    assert "MAGI-SESSION" not in parsed.error
    assert "disk full" in parsed.error


def test_a_wrongly_typed_field_reads_as_missing_and_the_event_still_counts() -> None:
    """Event models are lenient field by field: a numeric thread id is no id, the reply stays."""
    out = lines(
        {"type": "thread.started", "thread_id": 42},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "fine", "x": 1}},
        {"type": "turn.completed", "usage": {"input_tokens": "3", "output_tokens": True}},
    )
    parsed = CodexAdapter(cfg("codex")).parse(out, "", 0, REQ)
    assert (parsed.status, parsed.text, parsed.session_id) == (TurnStatus.OK, "fine", None)
    assert parsed.usage == Usage()


def test_claude_unknown_fields_are_ignored_and_a_bad_usage_is_none() -> None:
    out = json.dumps(
        {
            "type": "result",
            "is_error": False,
            "result": "ok",
            "session_id": "s",
            "usage": "n/a",
            "total_cost_usd": 0.5,
            "a_field_from_a_later_version": {"x": 1},
        }
    )
    parsed = ClaudeAdapter(cfg("claude")).parse(out, "", 0, REQ)
    assert (parsed.status, parsed.text, parsed.usage) == (TurnStatus.OK, "ok", Usage(cost_usd=0.5))


def test_opencode_error_given_as_a_plain_string() -> None:
    out = lines({"type": "error", "sessionID": "ses_1", "error": "socket hang up"})
    parsed = OpencodeAdapter(cfg("opencode")).parse(out, "", 1, REQ)
    assert (parsed.status, parsed.error) == (TurnStatus.ERROR, "opencode: socket hang up")


def test_gemini_auth_exit_is_marked_auth() -> None:
    err = {"session_id": "g", "error": {"type": "Error", "message": "Please set", "code": 41}}
    parsed = GeminiAdapter(cfg("gemini")).parse("", json.dumps(err, indent=2), 41, REQ)
    assert (parsed.status, parsed.failure) == (TurnStatus.ERROR, "auth")


def test_a_command_reports_its_usage_on_stderr_and_the_lines_add_up() -> None:
    c = cfg("command", command=["x"], model="llama3")
    err = (
        'MAGI-USAGE: {"input_tokens": 100, "cached_tokens": 40, "output_tokens": 20}\n'
        "thinking...\n"
        'MAGI-USAGE: {"output_tokens": 5, "cost_usd": 0.25, "model": "other"}\n'
    )
    parsed = CommandAdapter(c).parse("the reply", err, 0, REQ)
    assert parsed.status is TurnStatus.OK
    u = parsed.usage
    assert (u.input_tokens, u.cached_tokens, u.output_tokens) == (140, 40, 25)
    assert u.cost_usd == 0.25
    assert u.models["llama3"].model_dump() == {"input": 100, "cached": 40, "output": 20}
    assert u.models["other"].model_dump() == {"input": 0, "cached": 0, "output": 5}
    assert CommandAdapter(c).live('MAGI-USAGE: {"cost_usd": 1}').text is None


@pytest.mark.parametrize(
    "line",
    [
        'MAGI-USAGE: {"input_tokens": "100"}',  # a string is not a count
        'MAGI-USAGE: {"tokens": 100}',  # no such key: not read as nothing spent
        'MAGI-USAGE: {"cost_usd": -1}',
        'MAGI-USAGE: {"cost_usd": Infinity}',  # would hold every cap, and store as null
        'MAGI-USAGE: {"cost_usd": NaN}',
        "MAGI-USAGE: cost=0.2",
        'MAGI-USAGE: {"output_tokens": true}',
        '  MAGI-USAGE: {"cost_usd": 0.2}',  # indented: said, not skipped
    ],
)
def test_a_usage_line_that_is_not_usage_fails_the_turn_naming_the_line(line: str) -> None:
    """The turn fails naming the line; what the good lines reported still counts (a cap
    errs early, not late)."""
    c = cfg("command", command=["x"])
    err = f'MAGI-USAGE: {{"cost_usd": 1}}\n{line}\n'
    parsed = CommandAdapter(c).parse("the reply", err, 0, REQ)
    assert parsed.status is TurnStatus.ERROR
    assert parsed.error is not None
    assert "MAGI-USAGE line 2" in parsed.error
    assert parsed.usage == Usage(cost_usd=1.0)


def test_a_failing_command_keeps_what_it_reported_spending() -> None:
    c = cfg("command", command=["x"])
    parsed = CommandAdapter(c).parse("", 'MAGI-USAGE: {"cost_usd": 0.5}\nboom\n', 3, REQ)
    assert parsed.status is TurnStatus.ERROR
    assert parsed.usage.cost_usd == 0.5
    assert parsed.error is not None
    assert "MAGI-USAGE" not in parsed.error


def test_a_line_that_only_mentions_usage_is_no_usage_line() -> None:
    """A wrapper under ``set -x`` traces its ``echo``: that is not a report, nor an error."""
    c = cfg("command", command=["x"])
    err = '+ echo \'MAGI-USAGE: {"cost_usd": 0.2}\'\nMAGI-USAGE: {"cost_usd": 0.2}\n'
    parsed = CommandAdapter(c).parse("the reply", err, 0, REQ)
    assert parsed.status is TurnStatus.OK
    assert parsed.usage == Usage(cost_usd=0.2)


def test_codex_resumed_turn_counts_the_difference_from_the_kept_total() -> None:
    """A resumed thread's turn.completed is its running total: the turn's usage is what the
    total grew by since the one the seat kept; the new total comes back to be kept."""
    out = lines(
        {"type": "thread.started", "thread_id": "t1"},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "fine"}},
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 250, "cached_input_tokens": 120, "output_tokens": 30},
        },
    )
    kept = Usage(input_tokens=100, cached_tokens=50, output_tokens=10)
    req = TurnRequest(
        seat="judge-1",
        prompt="p",
        cwd=Path("/w"),
        allow_write=False,
        timeout=9,
        session_id="t1",
        session_total=kept,
    )
    parsed = CodexAdapter(cfg("codex")).parse(out, "", 0, req)
    assert (parsed.usage.input_tokens, parsed.usage.cached_tokens) == (150, 70)
    assert parsed.usage.output_tokens == 20
    assert parsed.session_total == Usage(input_tokens=250, cached_tokens=120, output_tokens=30)
    # A first turn (no session to resume) counts what it reports.
    fresh = CodexAdapter(cfg("codex")).parse(out, "", 0, REQ)
    assert fresh.usage.input_tokens == 250


def test_codex_writer_may_commit_in_its_own_clone(tmp_path: Path) -> None:
    """codex's workspace-write sandbox keeps ``.git`` read-only unless a writable root names
    it (its commits failed with ``index.lock: Read-only file system``): a writing turn in a
    clone names the clone's git directory, before ``resume``; a read-only turn never does."""
    (tmp_path / "it's a clone" / ".git").mkdir(parents=True)
    cwd = tmp_path / "it's a clone"
    adapter = CodexAdapter(cfg("codex"))
    write = TurnRequest(
        seat="impl-A", prompt="p", cwd=cwd, allow_write=True, timeout=9, session_id="t1"
    )
    argv = adapter.build(write, None).argv
    roots = f"sandbox_workspace_write.writable_roots=[{json.dumps(str(cwd / '.git'))}]"
    assert argv[argv.index(roots) - 1] == "-c"
    assert argv.index(roots) < argv.index("resume")
    read = TurnRequest(seat="judge-1", prompt="p", cwd=cwd, allow_write=False, timeout=9)
    assert not any("writable_roots" in a for a in adapter.build(read, None).argv)


def test_a_judge_packet_never_says_how_a_commit_was_made() -> None:
    """Whether a seat committed its work or magi committed what it left is no flag for the
    judges: codex could not commit under its own sandbox, so the flag named the CLI."""
    from magi.graph.packets import flags
    from magi.model.run import Candidate

    c = Candidate(label="A", seat="impl-A", branch="magi/r/A", rescued=True)
    assert flags(c) == ()
    assert flags(c.model_copy(update={"protected_changed": ["ci.yml"]})) == (
        "changes protected path ci.yml",
    )


def test_a_node_crash_shows_the_clis_own_error_line_not_the_stack_tail() -> None:
    """codex.js without its platform package, as Node 20 prints it: the turn's error is
    the thrown line, not "at ModuleJob.run ... | Node.js v20.20.2"."""
    stderr = (
        "file:///x/node_modules/@openai/codex/bin/codex.js:108\n"
        "  throw new Error(\n        ^\n\n"
        "Error: Missing optional dependency @openai/codex-linux-x64. Reinstall Codex: "
        "npm install -g @openai/codex@latest\n"
        "    at findCodexExecutable (file:///x/node_modules/@openai/codex/bin/codex.js:108:9)\n"
        "    at file:///x/node_modules/@openai/codex/bin/codex.js:113:20\n"
        "    at ModuleJob.run (node:internal/modules/esm/module_job:325:25)\n"
        "    at async ModuleLoader.import (node:internal/modules/esm/loader:606:24)\n\n"
        "Node.js v20.20.2\n"
    )
    parsed = CodexAdapter(cfg("codex")).parse("", stderr, 1, REQ)
    assert parsed.error == (
        "codex exited 1: Error: Missing optional dependency @openai/codex-linux-x64."
        " Reinstall Codex: npm install -g @openai/codex@latest"
    )


def test_claude_read_only_seats_may_run_the_git_the_prompts_invite() -> None:
    """Judge and review prompts invite `git show`, `git diff`, `git log`: a read-only claude
    seat has the shell for exactly those (claude's prefix patterns), no edit tool, and
    `dontAsk` denies every other command."""
    argv = ClaudeAdapter(cfg("claude")).build(REQ, "sid").argv
    tools = argv[argv.index("--tools") + 1].split(",")
    assert sorted(tools) == ["Bash", "Glob", "Grep", "Read"]
    allowed = argv[argv.index("--allowedTools") + 1 : argv.index("--permission-mode")]
    assert allowed == ["Bash(git show:*)", "Bash(git diff:*)", "Bash(git log:*)"]
    assert argv[argv.index("--permission-mode") + 1] == "dontAsk"


def test_claude_stream_reply_is_the_last_result_line() -> None:
    """stream-json: init, messages, then the result object; the reply is the result's."""
    out = lines(
        {"type": "system", "subtype": "init", "session_id": "s1"},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "working"}]}},
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": "done",
            "session_id": "s1",
        },
    )
    parsed = ClaudeAdapter(cfg("claude")).parse(out, "", 0, REQ)
    assert (parsed.status, parsed.text, parsed.session_id) == (TurnStatus.OK, "done", "s1")


def test_claude_retrying_a_rejected_key_is_a_final_auth_signal() -> None:
    """claude 2.1.197 retries a 401 ten times over ~170 s, saying so on each retry: the
    first such line ends the turn; an overload it retries is no such signal."""
    adapter = ClaudeAdapter(cfg("claude"))
    retry = {"type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 10}
    rejected = adapter.live(
        json.dumps({**retry, "error_status": 401, "error": "authentication_failed"})
    )
    assert rejected.final
    assert rejected.text is not None
    assert adapter.signals.classify(rejected.text) == "auth"
    busy = adapter.live(json.dumps({**retry, "error_status": 529, "error": "overloaded"}))
    assert not busy.final
