"""Claude Code (``claude -p --output-format json``): argv and the single JSON result object.

Facts relied on are in /work/shared/agents/README.md §1 (Claude Code 2.1.197): magi mints the
session id (``--session-id``) and resumes it with ``--resume``; the prompt goes on stdin
because ``--allowedTools``/``--tools`` are variadic and would swallow a positional prompt;
``--verbose`` is never passed, since with it ``json`` prints every message, not the result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from magi.agents.base import TurnRequest, TurnStatus, Usage
from magi.agents.cli import (
    Invocation,
    Parsed,
    executable,
    int_or_none,
    json_object,
    malformed,
    tail,
)
from magi.config.model import AgentConfig

EXECUTABLE = "claude"
VERSION_ARGV = ("claude", "--version")
KEY_ENV_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")

# README §1(e): the user-facing texts of subscription limits, plain 429s and spend limits.
QUOTA = re.compile(
    r"hit your|usage limit|rate limit|\(429\)|limiting requests|out of usage|spend limit"
    r"|credit balance is too low",
    re.IGNORECASE,
)
UNKNOWN_SESSION = "No conversation found"


@dataclass(frozen=True)
class ClaudeAdapter:
    cfg: AgentConfig
    mints_session: ClassVar[bool] = True
    needs_prompt_file: ClassVar[bool] = False

    def build(self, request: TurnRequest, session_id_to_open: str | None) -> Invocation:
        argv = [*executable(self.cfg, EXECUTABLE), "-p", "--output-format", "json"]
        if request.session_id:
            argv += ["--resume", request.session_id]
        elif session_id_to_open:
            argv += ["--session-id", session_id_to_open]
        if self.cfg.model:
            argv += ["--model", self.cfg.model]
        # The variadic tool flag comes first and a plain flag after it, so nothing is swallowed.
        if request.allow_write:
            argv += ["--allowedTools", "Bash", "--permission-mode", "acceptEdits"]
        else:
            argv += ["--tools", "Read,Grep,Glob", "--permission-mode", "dontAsk"]
        argv += self.cfg.args
        return Invocation(argv, request.prompt.encode())

    def parse(
        self, stdout: str, stderr: str, exit_code: int | None, request: TurnRequest
    ) -> Parsed:
        if not stdout.strip():
            # Startup failures (bad flag, unknown session) print text on stderr and no JSON.
            if UNKNOWN_SESSION in stderr:
                why = f"claude: unknown session {request.session_id} ({tail(stderr)})"
                return Parsed(TurnStatus.ERROR, error=why)
            status = TurnStatus.QUOTA if QUOTA.search(stderr) else TurnStatus.ERROR
            why = tail(stderr) or "no output"
            return Parsed(status, error=f"claude exited {exit_code}: {why}")
        obj = json_object(stdout)
        if obj is None or obj.get("type") != "result":
            return malformed("claude", "no JSON result object", stdout)
        sid = obj.get("session_id")
        session_id = sid if isinstance(sid, str) and sid else None
        raw_usage = obj.get("usage")
        u = raw_usage if isinstance(raw_usage, dict) else {}
        cost = obj.get("total_cost_usd")
        usage = Usage(
            input_tokens=int_or_none(u.get("input_tokens")),
            output_tokens=int_or_none(u.get("output_tokens")),
            cached_tokens=int_or_none(u.get("cache_read_input_tokens")),
            cost_usd=float(cost) if isinstance(cost, int | float) else None,
        )
        result = obj.get("result")
        if obj.get("is_error"):
            errors = obj.get("errors")
            if isinstance(result, str) and result:
                why = result
            elif isinstance(errors, list) and errors:
                why = "; ".join(str(e) for e in errors)
            else:
                why = str(obj.get("subtype") or "is_error")
            quota = obj.get("api_error_status") == 429 or bool(QUOTA.search(why))
            status = TurnStatus.QUOTA if quota else TurnStatus.ERROR
            return Parsed(status, session_id=session_id, usage=usage, error=f"claude: {why}")
        if not isinstance(result, str):
            return malformed("claude", "the result object has no text 'result'", stdout)
        return Parsed(TurnStatus.OK, text=result, session_id=session_id, usage=usage)
