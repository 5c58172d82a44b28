"""Claude Code (``claude -p --output-format json``): argv and the single JSON result object.

Facts relied on are in /work/shared/agents/README.md §1 (Claude Code 2.1.197): magi mints the
session id (``--session-id``) and resumes it with ``--resume``; the prompt goes on stdin
because ``--allowedTools``/``--tools`` are variadic and would swallow a positional prompt;
``--verbose`` is never passed, since with it ``json`` prints every message, not the result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, ClassVar

from magi.agents.base import TurnRequest, TurnStatus, Usage
from magi.agents.cli import Invocation, Parsed, executable, malformed, tail
from magi.agents.events import Event, Flag, Int, Lenient, Num, Str, document, event
from magi.agents.live import LiveLine, Signals
from magi.model.config import AgentConfig

EXECUTABLE = "claude"
VERSION_ARGV = ("claude", "--version")
KEY_ENV_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
# Where its turns go, for the jail's egress allowlist: the API, and the login's token refresh.
EGRESS_HOSTS = ("api.anthropic.com", "console.anthropic.com", "platform.claude.com", "claude.ai")

# README §1(e): the user-facing texts of subscription limits, plain 429s and spend limits.
QUOTA = re.compile(
    r"hit your|usage limit|rate limit|\(429\)|limiting requests|out of usage|spend limit"
    r"|credit balance is too low",
    re.IGNORECASE,
)
UNKNOWN_SESSION = "No conversation found"
# Claude Code 2.1.197 offline: not logged in, the result text is "Not logged in · Please run
# /login" (exit 1, at once); with a key but no network it retries silently and ends with
# "API Error: Unable to connect to API ..." (docs/agents-verified.md).
SIGNALS = Signals(
    unreachable=re.compile(
        r"Unable to connect to API|Connection error|ECONNREFUSED|ENOTFOUND|EAI_AGAIN"
        r"|fetch failed|getaddrinfo",
        re.IGNORECASE,
    ),
    unauthenticated=re.compile(
        r"Not logged in|Please run /login|Invalid API key|authentication_failed"
        r"|OAuth token has expired|\(401\)",
        re.IGNORECASE,
    ),
)


class ClaudeUsage(Event):
    input_tokens: Int = None
    output_tokens: Int = None
    cache_read_input_tokens: Int = None


class ClaudeResult(Event):
    """The single object ``claude -p --output-format json`` prints (README §1(d))."""

    type: Str = None
    subtype: Str = None
    is_error: Flag = None
    api_error_status: Int = None
    result: Str = None
    errors: Annotated[list[str] | None, Lenient] = None
    session_id: Str = None
    total_cost_usd: Num = None
    usage: Annotated[ClaudeUsage | None, Lenient] = None

    def token_usage(self) -> Usage:
        u = self.usage or ClaudeUsage()
        cost = float(self.total_cost_usd) if self.total_cost_usd is not None else None
        return Usage(
            input_tokens=u.input_tokens,
            output_tokens=u.output_tokens,
            cached_tokens=u.cache_read_input_tokens,
            cost_usd=cost,
        )

    def why(self) -> str:
        if self.result:
            return self.result
        if self.errors:
            return "; ".join(self.errors)
        return self.subtype or "is_error"


@dataclass(frozen=True)
class ClaudeAdapter:
    cfg: AgentConfig
    mints_session: ClassVar[bool] = True
    needs_prompt_file: ClassVar[bool] = False
    signals: ClassVar[Signals] = SIGNALS

    def live(self, line: str) -> LiveLine:
        # stdout holds one object, at the end; before it only stderr says anything.
        result = event(line, ClaudeResult)
        if result is None or result.type != "result":
            return LiveLine(line)
        return LiveLine(result.why() if result.is_error else None, progress=not result.is_error)

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
        obj = document(stdout, ClaudeResult)
        if obj is None or obj.type != "result":
            return malformed("claude", "no JSON result object", stdout)
        session_id = obj.session_id or None
        usage = obj.token_usage()
        if obj.is_error:
            why = obj.why()
            quota = obj.api_error_status == 429 or bool(QUOTA.search(why))
            status = TurnStatus.QUOTA if quota else TurnStatus.ERROR
            return Parsed(status, session_id=session_id, usage=usage, error=f"claude: {why}")
        if obj.result is None:
            return malformed("claude", "the result object has no text 'result'", stdout)
        return Parsed(TurnStatus.OK, text=obj.result, session_id=session_id, usage=usage)
