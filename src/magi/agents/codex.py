"""Codex (``codex exec --json``): argv with every option before ``resume``, and the JSONL events.

Facts relied on are in /work/shared/agents/README.md §2 (Codex 0.171.0): the thread id cannot
be chosen, it is read from ``thread.started``; ``-s`` and ``-C`` are rejected after the
``resume`` subcommand, so all options (the config's ``args`` too) precede it; the prompt is
read from stdin through the ``-`` positional; the sandbox is passed on every resumed turn
because whether a resumed thread inherits it is unverified.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, ClassVar

from magi.agents.base import TurnRequest, TurnStatus, Usage
from magi.agents.cli import Invocation, Parsed, executable, no_events, tail
from magi.agents.events import Event, Int, Lenient, Str, event, events
from magi.agents.live import LiveLine, Signals
from magi.core.seats.clistate import CliState, Login, Root
from magi.model.config import AgentConfig
from magi.model.run import ModelTokens

EXECUTABLE = "codex"
VERSION_ARGV = ("codex", "--version")
KEY_ENV_VARS = ("OPENAI_API_KEY", "CODEX_API_KEY")
# Where its turns go, for the jail's egress allowlist: the API key's, and a ChatGPT login's
# (chatgpt.com/backend-api, its token refresh at auth.openai.com).
EGRESS_HOSTS = ("api.openai.com", "chatgpt.com", "auth.openai.com")

# Where codex keeps its state, and its login (``auth.json``); ``config.toml`` (settings, MCP
# servers) and ``AGENTS.md`` are the user's and never reach a seat (docs/jail.md).
STATE = CliState(
    (
        Root("~/.codex", (Login("auth.json"),)),
        Root("$CODEX_HOME", (Login("auth.json"),)),
    )
)

# README §2(e). Codex writes "You’ve" with U+2019, so nothing here depends on the apostrophe.
QUOTA = re.compile(
    r"hit your usage limit|usage limit reached|out of credits|rate limit|\b429\b|too many requests",
    re.IGNORECASE,
)
# Seen from codex-cli 0.171.0 offline (docs/agents-verified.md): `error` events
# "Reconnecting... 2/5 (stream disconnected before completion: failed to lookup address
# information ...)", then "Reconnecting... waiting for network (Connection failed: error
# sending request)" for as long as it runs; stderr logs "failed to connect to Responses
# WebSocket". Not logged in, `codex exec` goes to the network all the same. "stream
# disconnected" alone is not a signal: a server can drop a stream mid-turn too.
SIGNALS = Signals(
    unreachable=re.compile(
        r"Reconnecting\.\.\.|waiting for network|Connection failed|failed to connect"
        r"|failed to lookup address",
        re.IGNORECASE,
    ),
    unauthenticated=re.compile(
        r"Not logged in|401 Unauthorized|invalid_api_key|Incorrect API key|token_expired"
        r"|refresh token|Missing bearer",
        re.IGNORECASE,
    ),
)


class CodexUsage(Event):
    """``turn.completed.usage`` (README §2(d)). As in OpenAI's API (upstream codex source;
    UNVERIFIED for 0.171), ``input_tokens`` counts the cached ones too and ``output_tokens``
    the reasoning ones, so the price split takes the cached out of input and adds nothing
    to output. On a resumed thread the figures are the thread's running total (README §5,
    seen against a scripted model): the turn's share is the difference from the total the
    seat's record kept (``running_share``)."""

    input_tokens: Int = None
    cached_input_tokens: Int = None
    output_tokens: Int = None

    def usage(self, model: str | None) -> Usage:
        models: dict[str, ModelTokens] = {}
        if model and (self.input_tokens is not None or self.output_tokens is not None):
            given, cached = self.input_tokens or 0, self.cached_input_tokens or 0
            split = ModelTokens(
                input=max(0, given - cached),
                cached=min(cached, given),
                output=self.output_tokens or 0,
            )
            models[model] = split
        return Usage(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cached_tokens=self.cached_input_tokens,
            models=models,
        )


class CodexItem(Event):
    type: Str = None  # agent_message, reasoning, command_execution, file_change, error, ...
    text: Str = None
    message: Str = None
    command: Str = None


class CodexFailure(Event):
    message: Str = None


class CodexEvent(Event):
    """One line of ``codex exec --json`` (README §2(d))."""

    type: Str = None
    thread_id: Str = None
    item: Annotated[CodexItem | None, Lenient] = None
    usage: Annotated[CodexUsage | None, Lenient] = None
    message: Str = None  # type "error"
    error: Annotated[CodexFailure | None, Lenient] = None  # type "turn.failed"

    def error_message(self) -> str | None:
        if self.type == "error":
            return self.message or "unspecified error"
        if self.type == "turn.failed":
            return (self.error.message if self.error else None) or "unspecified error"
        return None


def writable_git(cwd: Path) -> str:
    """The ``-c`` that lets codex commit in its own clone. Under ``-s workspace-write`` its
    sandbox keeps ``.git`` read-only even inside the writable cwd, so every ``git commit``
    failed (``index.lock: Read-only file system``) and magi's rescue commit did the work
    (README §5). Naming the clone's git directory as a writable root lifts that, and only
    that: magi's jail still decides what the process may touch. The path is a TOML string
    (JSON's escapes are TOML's)."""
    return f"sandbox_workspace_write.writable_roots=[{json.dumps(str(cwd / '.git'))}]"


def running_share(reported: Usage, request: TurnRequest, session_id: str | None) -> Usage:
    """This turn's usage from what codex reported: on a resumed thread that is the thread's
    running total, so the total the seat's record kept for the same thread comes off it.
    A figure below the kept one is not a running total (a thread started afresh): as is."""
    before = request.session_total
    if before is None or not request.session_id or session_id != request.session_id:
        return reported
    pairs = [
        (reported.input_tokens, before.input_tokens),
        (reported.output_tokens, before.output_tokens),
        (reported.cached_tokens, before.cached_tokens),
    ]
    if any(now is not None and was is not None and now < was for now, was in pairs):
        return reported
    return reported.minus(before)


_LOG_TIME = re.compile(r"^\d{4}-\d\d-\d\dT[\d:.]+Z\s+")  # codex's tracing logs on stderr


def _live(line: str) -> LiveLine:
    ev = event(line, CodexEvent)
    if ev is None:
        return LiveLine(_LOG_TIME.sub("", line))  # stderr logs and warnings
    if (msg := ev.error_message()) is not None:
        return LiveLine(msg)
    item = ev.item
    if ev.type and ev.type.startswith("item.") and item is not None:
        if item.type == "error":  # "Falling back from WebSockets to HTTPS transport ..."
            return LiveLine(item.message)
        shown = item.text if item.type == "agent_message" else item.command or item.type
        return LiveLine(shown, progress=True)
    return LiveLine(None, progress=ev.type == "turn.completed")


@dataclass(frozen=True)
class CodexAdapter:
    cfg: AgentConfig
    mints_session: ClassVar[bool] = False
    needs_prompt_file: ClassVar[bool] = False
    signals: ClassVar[Signals] = SIGNALS

    def live(self, line: str) -> LiveLine:
        return _live(line)

    def build(self, request: TurnRequest, session_id_to_open: str | None) -> Invocation:
        sandbox = "workspace-write" if request.allow_write else "read-only"
        argv = [*executable(self.cfg, EXECUTABLE), "exec", "--json", "-s", sandbox]
        argv += ["-C", str(request.cwd), "--skip-git-repo-check"]
        if self.cfg.model:
            argv += ["-m", self.cfg.model]
        argv += ["-c", 'approval_policy="never"']
        if request.allow_write and (request.cwd / ".git").is_dir():  # a clone of its own
            argv += ["-c", writable_git(request.cwd)]
        argv += self.cfg.args
        if request.session_id:
            argv += ["resume", request.session_id]
        argv.append("-")
        return Invocation(argv, request.prompt.encode())

    def parse(
        self, stdout: str, stderr: str, exit_code: int | None, request: TurnRequest
    ) -> Parsed:
        evs = events(stdout, CodexEvent)
        if not evs:
            return no_events("codex", stdout, stderr, exit_code, QUOTA)
        session_id: str | None = None
        reply: str | None = None
        usage = Usage()
        completed = False
        errors: list[str] = []
        for ev in evs:
            if ev.type == "thread.started" and ev.thread_id is not None:
                session_id = ev.thread_id
            elif ev.type == "item.completed" and ev.item and ev.item.type == "agent_message":
                reply = ev.item.text if ev.item.text is not None else reply
            elif ev.type == "turn.completed":
                completed = True
                # The events name no model: it is the one the agent's config passed (-m).
                usage = usage + (ev.usage.usage(self.cfg.model) if ev.usage else Usage())
            elif (msg := ev.error_message()) is not None:
                errors.append(msg)
        total = usage if completed and usage != Usage() else None
        usage = running_share(usage, request, session_id)
        if completed and exit_code == 0 and reply is not None:
            # An `error` event followed by a completed turn was a retried hiccup, not a failure.
            return Parsed(
                TurnStatus.OK, text=reply, session_id=session_id, usage=usage, session_total=total
            )
        if errors:
            quota = any(QUOTA.search(m) for m in errors)
            status = TurnStatus.QUOTA if quota else TurnStatus.ERROR
            why = f"codex: {errors[-1]}"
            return Parsed(
                status, session_id=session_id, usage=usage, error=why, session_total=total
            )
        if exit_code != 0:
            why = tail(stderr) or "no error event"
            return Parsed(
                TurnStatus.ERROR, session_id=session_id, error=f"codex exited {exit_code}: {why}"
            )
        why = "no agent_message item" if completed else "no turn.completed event"
        return Parsed(
            TurnStatus.ERROR,
            session_id=session_id,
            usage=usage,
            error=f"codex: {why}",
            session_total=total,
        )
