"""Codex (``codex exec --json``): argv with every option before ``resume``, and the JSONL events.

Facts relied on are in /work/shared/agents/README.md §2 (Codex 0.171.0): the thread id cannot
be chosen, it is read from ``thread.started``; ``-s`` and ``-C`` are rejected after the
``resume`` subcommand, so all options (the config's ``args`` too) precede it; the prompt is
read from stdin through the ``-`` positional; the sandbox is passed on every resumed turn
because whether a resumed thread inherits it is unverified.
"""

from __future__ import annotations

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

EXECUTABLE = "codex"
VERSION_ARGV = ("codex", "--version")
KEY_ENV_VARS = ("OPENAI_API_KEY", "CODEX_API_KEY")

# README §2(e). Codex writes "You’ve" with U+2019, so nothing here depends on the apostrophe.
QUOTA = re.compile(
    r"hit your usage limit|usage limit reached|out of credits|rate limit|\b429\b|too many requests",
    re.IGNORECASE,
)


def _usage(event: dict[str, Any]) -> Usage:
    u = event.get("usage")
    if not isinstance(u, dict):
        return Usage()
    return Usage(
        input_tokens=int_or_none(u.get("input_tokens")),
        output_tokens=int_or_none(u.get("output_tokens")),
        cached_tokens=int_or_none(u.get("cached_input_tokens")),
    )


def _error_message(event: dict[str, Any]) -> str | None:
    if event.get("type") == "error":
        msg = event.get("message")
    elif event.get("type") == "turn.failed":
        err = event.get("error")
        msg = err.get("message") if isinstance(err, dict) else None
    else:
        return None
    return msg if isinstance(msg, str) and msg else "unspecified error"


@dataclass(frozen=True)
class CodexAdapter:
    cfg: AgentConfig
    mints_session: ClassVar[bool] = False
    needs_prompt_file: ClassVar[bool] = False

    def build(self, request: TurnRequest, session_id_to_open: str | None) -> Invocation:
        sandbox = "workspace-write" if request.allow_write else "read-only"
        argv = [*executable(self.cfg, EXECUTABLE), "exec", "--json", "-s", sandbox]
        argv += ["-C", str(request.cwd), "--skip-git-repo-check"]
        if self.cfg.model:
            argv += ["-m", self.cfg.model]
        argv += ["-c", 'approval_policy="never"', *self.cfg.args]
        if request.session_id:
            argv += ["resume", request.session_id]
        argv.append("-")
        return Invocation(argv, request.prompt.encode())

    def parse(
        self, stdout: str, stderr: str, exit_code: int | None, request: TurnRequest
    ) -> Parsed:
        events = json_lines(stdout)
        if not events:
            return no_events("codex", stdout, stderr, exit_code, QUOTA)
        session_id: str | None = None
        reply: str | None = None
        usage = Usage()
        completed = False
        errors: list[str] = []
        for ev in events:
            kind = ev.get("type")
            if kind == "thread.started" and isinstance(ev.get("thread_id"), str):
                session_id = ev["thread_id"]
            elif kind == "item.completed":
                item = ev.get("item")
                if isinstance(item, dict) and item.get("type") == "agent_message":
                    text = item.get("text")
                    reply = text if isinstance(text, str) else reply
            elif kind == "turn.completed":
                completed = True
                usage = usage + _usage(ev)
            elif (msg := _error_message(ev)) is not None:
                errors.append(msg)
        if completed and exit_code == 0 and reply is not None:
            # An `error` event followed by a completed turn was a retried hiccup, not a failure.
            return Parsed(TurnStatus.OK, text=reply, session_id=session_id, usage=usage)
        if errors:
            quota = any(QUOTA.search(m) for m in errors)
            status = TurnStatus.QUOTA if quota else TurnStatus.ERROR
            return Parsed(status, session_id=session_id, usage=usage, error=f"codex: {errors[-1]}")
        if exit_code != 0:
            why = tail(stderr) or "no error event"
            return Parsed(
                TurnStatus.ERROR, session_id=session_id, error=f"codex exited {exit_code}: {why}"
            )
        why = "no agent_message item" if completed else "no turn.completed event"
        return Parsed(TurnStatus.ERROR, session_id=session_id, usage=usage, error=f"codex: {why}")
