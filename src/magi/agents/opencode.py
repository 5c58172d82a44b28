"""opencode (``opencode run --format json``): argv, read-only permissions, and the JSONL events.

Facts relied on are in /work/shared/agents/README.md §3 (opencode 1.18.33): the session id is
read from the events' ``sessionID`` and resumed with ``-s``; the prompt goes on stdin with no
positional (a positional containing a space gets wrapped in literal quotes); the ``plan``
agent still allows bash, so read-only seats also get ``OPENCODE_PERMISSION`` denying edit,
bash and webfetch; rate limits are retried silently, so only magi's timeout bounds them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Annotated, ClassVar

from magi.agents.base import TurnRequest, TurnStatus, Usage
from magi.agents.cli import Invocation, Parsed, executable, no_events, tail
from magi.agents.events import Event, Int, Lenient, Num, Str, event, events
from magi.agents.live import LiveLine, Signals
from magi.core.seats.clistate import CliState, Login, Root
from magi.model.config import AgentConfig

EXECUTABLE = "opencode"
VERSION_ARGV = ("opencode", "--version")
# opencode can seat any provider's model; these are the providers' usual key variables.
KEY_ENV_VARS = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_GENERATIVE_AI_API_KEY",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "MISTRAL_API_KEY",
    "DEEPSEEK_API_KEY",
    "XAI_API_KEY",
    "OPENCODE_API_KEY",
)

# Where opencode keeps its state: its login is ``auth.json`` in its data folder; its config
# folder (opencode.json, agents, instructions) never reaches a seat; its cache (provider
# packages) seeds each seat's copy once and never flows back (docs/jail.md).
STATE = CliState(
    (
        Root("~/.config/opencode"),
        Root("~/.local/share/opencode", (Login("auth.json"),)),
        Root("~/.local/state/opencode"),
        Root("~/.cache/opencode", seed=True),
        Root("$OPENCODE_CONFIG_DIR"),
    )
)
# Where its turns go, for the jail's egress allowlist: the providers of its key variables
# above, opencode's own (its Zen gateway), and models.dev, where it reads its model list.
EGRESS_HOSTS = (
    "api.anthropic.com",
    "api.openai.com",
    "generativelanguage.googleapis.com",
    "openrouter.ai",
    "api.groq.com",
    "api.mistral.ai",
    "api.deepseek.com",
    "api.x.ai",
    "opencode.ai",
    "models.dev",
)
READ_ONLY_PERMISSION = json.dumps({"edit": "deny", "bash": "deny", "webfetch": "deny"})

# README §3(e): the non-retryable quota errors that end a run.
QUOTA = re.compile(
    r"quota exceeded|usage exceeded|usage limit reached|too many requests|rate limit",
    re.IGNORECASE,
)
# opencode 1.18.33 offline, with a key or without: about 70 s of silent retries, then one
# `error` event, APIError "Cannot connect to API: Unable to connect. Is the computer able
# to access the url?", and exit 1 (docs/agents-verified.md).
SIGNALS = Signals(
    unreachable=re.compile(r"Cannot connect to API|Unable to connect|ECONNREFUSED|ENOTFOUND"),
    unauthenticated=re.compile(
        r"invalid x-api-key|Invalid API key|Incorrect API key|authentication_error"
        r"|API key not valid|\b401\b|ProviderAuthError|LoadAPIKeyError",
        re.IGNORECASE,
    ),
)


class OpencodeCache(Event):
    read: Int = None


class OpencodeTokens(Event):
    input: Int = None
    output: Int = None
    cache: Annotated[OpencodeCache | None, Lenient] = None


class OpencodePart(Event):
    type: Str = None
    text: Str = None
    tool: Str = None
    reason: Str = None
    cost: Num = None
    tokens: Annotated[OpencodeTokens | None, Lenient] = None

    def usage(self) -> Usage:
        t = self.tokens or OpencodeTokens()
        cached = t.cache.read if t.cache else None
        cost = float(self.cost) if self.cost is not None else None
        return Usage(
            input_tokens=t.input, output_tokens=t.output, cached_tokens=cached, cost_usd=cost
        )


class OpencodeErrorData(Event):
    message: Str = None


class OpencodeError(Event):
    name: Str = None
    data: Annotated[OpencodeErrorData | None, Lenient] = None

    def __str__(self) -> str:
        msg = self.data.message if self.data else None
        if msg:
            return f"{self.name}: {msg}" if self.name else msg
        return self.name or "unspecified error"


class OpencodeEvent(Event):
    """One line of ``opencode run --format json`` (README §3(d))."""

    type: Str = None
    sessionID: Str = None  # opencode's own spelling
    part: Annotated[OpencodePart | None, Lenient] = None
    error: Annotated[OpencodeError | str | None, Lenient] = None

    def error_message(self) -> str:
        return str(self.error or "unspecified error")


def _live(line: str) -> LiveLine:
    ev = event(line, OpencodeEvent)
    if ev is None:
        return LiveLine(line)
    if ev.type == "error":
        return LiveLine(ev.error_message())
    part = ev.part or OpencodePart()
    if ev.type == "text":
        return LiveLine(part.text, progress=True)
    if ev.type == "tool_use":
        return LiveLine(f"tool: {part.tool}" if part.tool else None, progress=True)
    return LiveLine(None, progress=ev.type in ("step_start", "step_finish", "reasoning"))


@dataclass(frozen=True)
class OpencodeAdapter:
    cfg: AgentConfig
    mints_session: ClassVar[bool] = False
    needs_prompt_file: ClassVar[bool] = False
    signals: ClassVar[Signals] = SIGNALS

    def live(self, line: str) -> LiveLine:
        return _live(line)

    def build(self, request: TurnRequest, session_id_to_open: str | None) -> Invocation:
        argv = [*executable(self.cfg, EXECUTABLE), "run", "--format", "json"]
        argv += ["--dir", str(request.cwd)]
        if self.cfg.model:
            argv += ["-m", self.cfg.model]
        argv += ["--agent", "build" if request.allow_write else "plan"]
        if request.session_id:
            argv += ["-s", request.session_id]
        argv += self.cfg.args
        env = {} if request.allow_write else {"OPENCODE_PERMISSION": READ_ONLY_PERMISSION}
        return Invocation(argv, request.prompt.encode(), env)

    def parse(
        self, stdout: str, stderr: str, exit_code: int | None, request: TurnRequest
    ) -> Parsed:
        evs = events(stdout, OpencodeEvent)
        if not evs:
            return no_events("opencode", stdout, stderr, exit_code, QUOTA)
        session_id: str | None = None
        last_text: str | None = None
        step_texts: list[str] = []
        usage = Usage()
        errors: list[str] = []
        for ev in evs:
            if ev.sessionID is not None:
                session_id = ev.sessionID
            part = ev.part or OpencodePart()
            if ev.type == "step_start":
                step_texts = []
            elif ev.type == "text" and part.text is not None:
                last_text = part.text
                step_texts.append(last_text)
            elif ev.type == "step_finish":
                usage = usage + part.usage()
            elif ev.type == "error":
                errors.append(ev.error_message())
        if errors:
            status = TurnStatus.QUOTA if any(QUOTA.search(m) for m in errors) else TurnStatus.ERROR
            return Parsed(
                status, session_id=session_id, usage=usage, error=f"opencode: {errors[-1]}"
            )
        if exit_code != 0:
            why = tail(stderr) or "no error event"
            return Parsed(
                TurnStatus.ERROR,
                session_id=session_id,
                usage=usage,
                error=f"opencode exited {exit_code}: {why}",
            )
        # The reply is the last step's text; a last step with none falls back to the last text.
        text = "\n".join(step_texts) if step_texts else last_text
        if text is None:
            return Parsed(
                TurnStatus.ERROR,
                session_id=session_id,
                usage=usage,
                error="opencode: the run printed no text part",
            )
        return Parsed(TurnStatus.OK, text=text, session_id=session_id, usage=usage)
