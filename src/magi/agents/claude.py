"""Claude Code (``claude -p --output-format stream-json --verbose``): argv, and the events
ending in one result object.

Facts relied on are in /work/shared/agents/README.md §1 (Claude Code 2.1.197): magi mints the
session id (``--session-id``) and resumes it with ``--resume``; the prompt goes on stdin
because ``--allowedTools``/``--tools`` are variadic and would swallow a positional prompt.
``stream-json`` needs ``--verbose`` and prints JSONL as the turn goes, the last line the
same result object ``json`` prints alone: magi reads it for what a turn is doing, and ends a
turn whose key is rejected at the first ``api_retry`` of a 401 (claude retries a 401 ten
times over some 170 s, docs/agents-verified.md) instead of waiting it out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, ClassVar

from magi.agents.base import TurnRequest, TurnStatus, Usage
from magi.agents.cli import Invocation, Parsed, executable, malformed, tail
from magi.agents.events import Event, Flag, Int, Lenient, Num, Str, event, events
from magi.agents.live import LiveLine, Signals
from magi.core.seats.clistate import CliState, Login, Root
from magi.model.config import AgentConfig

EXECUTABLE = "claude"
VERSION_ARGV = ("claude", "--version")
KEY_ENV_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
# Where its turns go, for the jail's egress allowlist: the API, and the login's token refresh.
EGRESS_HOSTS = ("api.anthropic.com", "console.anthropic.com", "platform.claude.com", "claude.ai")

# Where Claude Code keeps its state (``CLAUDE_CONFIG_DIR`` moves both), and its login: the
# OAuth credentials file, and the account keys of ``~/.claude.json`` (the rest of it is
# settings: project trust, MCP servers). Each seat gets its own copy (docs/jail.md).
_CLAUDE_JSON = ("oauthAccount", "userID", "primaryApiKey", "customApiKeyResponses")
STATE = CliState(
    (
        Root("~/.claude", (Login(".credentials.json"),)),
        Root("~/.claude.json", (Login("", _CLAUDE_JSON),), file=True),
        Root(
            "$CLAUDE_CONFIG_DIR",
            (Login(".credentials.json"), Login(".claude.json", _CLAUDE_JSON)),
        ),
    )
)

# README §1(e): the user-facing texts of subscription limits, plain 429s and spend limits.
QUOTA = re.compile(
    r"hit your|usage limit|rate limit|\(429\)|limiting requests|out of usage|spend limit"
    r"|credit balance is too low",
    re.IGNORECASE,
)
UNKNOWN_SESSION = "No conversation found"
# The api_retry status that means the credential is refused (Anthropic's 401
# authentication_error: https://docs.anthropic.com/en/api/errors).
_REJECTED = frozenset({401})
# A judge's or reviewer's tools: reading, and the shell only for the git commands its prompt
# invites (``git show``, ``git diff``, ``git log``). Under ``dontAsk`` a command no pattern
# allows is denied, never asked; ``:*`` is claude's prefix match (2.1.197 names it
# "Bash(npm run:*) - prefix matching"). The seat's jail keeps its tree read-only whatever
# a command does.
READ_TOOLS = "Read,Grep,Glob,Bash"
READ_ONLY_GIT = ("Bash(git show:*)", "Bash(git diff:*)", "Bash(git log:*)")
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
    """One line of ``stream-json``; the last, of type ``result``, is the object ``json``
    prints alone (README §1(d)). ``api_retry`` lines (type ``system``) carry the status
    of the error being retried: ``{"subtype": "api_retry", "attempt": 1,
    "error_status": 401, "error": "authentication_failed", ...}`` (seen from 2.1.197)."""

    type: Str = None
    subtype: Str = None
    error_status: Int = None  # an api_retry's HTTP status
    error: Str = None  # an api_retry's error kind
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
        ev = event(line, ClaudeResult)
        if ev is None:
            return LiveLine(line)  # stderr
        if ev.type == "system" and ev.subtype == "api_retry":
            said = f"API error {ev.error_status} ({ev.error or 'unknown'}), retrying"
            # A rejected key is not retried into working: the turn ends on the first one.
            return LiveLine(said, final=ev.error_status in _REJECTED)
        if ev.type in ("assistant", "user"):
            return LiveLine(None, progress=True)  # the model at work, a tool's result
        if ev.type != "result":
            return LiveLine(None)
        return LiveLine(ev.why() if ev.is_error else None, progress=not ev.is_error)

    def build(self, request: TurnRequest, session_id_to_open: str | None) -> Invocation:
        argv = [*executable(self.cfg, EXECUTABLE), "-p", "--output-format", "stream-json"]
        argv.append("--verbose")  # stream-json refuses to run without it
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
            argv += ["--tools", READ_TOOLS, "--allowedTools", *READ_ONLY_GIT]
            argv += ["--permission-mode", "dontAsk"]
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
        obj = next((e for e in reversed(events(stdout, ClaudeResult)) if e.type == "result"), None)
        if obj is None:
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
