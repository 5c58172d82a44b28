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
from typing import Any, ClassVar

from magi.agents.base import TurnRequest, TurnStatus, Usage
from magi.agents.cli import (
    Invocation,
    Parsed,
    executable,
    int_or_none,
    json_lines,
    no_events,
    tail,
)
from magi.config.model import AgentConfig

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
READ_ONLY_PERMISSION = json.dumps({"edit": "deny", "bash": "deny", "webfetch": "deny"})

# README §3(e): the non-retryable quota errors that end a run.
QUOTA = re.compile(
    r"quota exceeded|usage exceeded|usage limit reached|too many requests|rate limit",
    re.IGNORECASE,
)


def _error_message(event: dict[str, Any]) -> str:
    err = event.get("error")
    if not isinstance(err, dict):
        return str(err or "unspecified error")
    data = err.get("data")
    msg = data.get("message") if isinstance(data, dict) else None
    name = err.get("name")
    if isinstance(msg, str) and msg:
        return f"{name}: {msg}" if isinstance(name, str) and name else msg
    return str(name or "unspecified error")


def _step_usage(part: dict[str, Any]) -> Usage:
    tokens = part.get("tokens")
    t = tokens if isinstance(tokens, dict) else {}
    cache = t.get("cache")
    cost = part.get("cost")
    return Usage(
        input_tokens=int_or_none(t.get("input")),
        output_tokens=int_or_none(t.get("output")),
        cached_tokens=int_or_none(cache.get("read")) if isinstance(cache, dict) else None,
        cost_usd=float(cost) if isinstance(cost, int | float) else None,
    )


@dataclass(frozen=True)
class OpencodeAdapter:
    cfg: AgentConfig
    mints_session: ClassVar[bool] = False
    needs_prompt_file: ClassVar[bool] = False

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
        events = json_lines(stdout)
        if not events:
            return no_events("opencode", stdout, stderr, exit_code, QUOTA)
        session_id: str | None = None
        last_text: str | None = None
        step_texts: list[str] = []
        usage = Usage()
        errors: list[str] = []
        for ev in events:
            if isinstance(ev.get("sessionID"), str):
                session_id = ev["sessionID"]
            kind = ev.get("type")
            part = ev.get("part")
            part = part if isinstance(part, dict) else {}
            if kind == "step_start":
                step_texts = []
            elif kind == "text" and isinstance(part.get("text"), str):
                last_text = part["text"]
                step_texts.append(last_text)
            elif kind == "step_finish":
                usage = usage + _step_usage(part)
            elif kind == "error":
                errors.append(_error_message(ev))
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
