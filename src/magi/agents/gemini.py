"""Gemini CLI (prompt on stdin, ``gemini --prompt=<tail> --output-format json``): argv and result.

Facts relied on are in /work/shared/agents/README.md §4 (Gemini CLI 0.61.0): magi mints the
session id (``--session-id``) and resumes with ``--resume``; ``--skip-trust`` avoids the
headless untrusted-folder exit; fatal errors are a JSON object on stderr with ``error.code``.

The prompt goes on stdin: gemini reads piped stdin and appends the ``--prompt`` text to it
(checked against 0.61.0: the stored user message is the stdin text, blank lines, then the
``--prompt`` text; see docs/agents-verified.md). A short fixed ``--prompt=`` tail keeps the
prompt out of argv: no 128 KiB argument limit, no prompt in the process list, and a prompt
beginning with ``-`` is never read as an option.
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
    json_object,
    malformed,
    tail,
)
from magi.config.model import AgentConfig

EXECUTABLE = "gemini"
VERSION_ARGV = ("gemini", "--version")
KEY_ENV_VARS = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS")
# Appended by gemini after the stdin text; it must be non-empty for headless mode.
PROMPT_TAIL = "(Respond to the message above.)"

QUOTA = re.compile(
    r"\b429\b|RESOURCE_EXHAUSTED|exhausted your daily quota|TerminalQuotaError|RetryableQuotaError",
    re.IGNORECASE,
)


def _usage(stats: object) -> Usage:
    models = stats.get("models") if isinstance(stats, dict) else None
    total = Usage()
    if not isinstance(models, dict):
        return total
    for model in models.values():
        tokens = model.get("tokens") if isinstance(model, dict) else None
        if isinstance(tokens, dict):
            # `input` excludes cached tokens (like claude's input_tokens); `prompt` includes them.
            given = int_or_none(tokens.get("input"))
            total = total + Usage(
                input_tokens=given if given is not None else int_or_none(tokens.get("prompt")),
                output_tokens=int_or_none(tokens.get("candidates")),
                cached_tokens=int_or_none(tokens.get("cached")),
            )
    return total


def _error(err: dict[str, Any], session_id: str | None, usage: Usage) -> Parsed:
    code, kind, message = err.get("code"), err.get("type"), err.get("message")
    what = " ".join(str(x) for x in (kind, message) if x) or "unspecified error"
    quota = code == 429 or bool(QUOTA.search(what))
    status = TurnStatus.QUOTA if quota else TurnStatus.ERROR
    return Parsed(status, session_id=session_id, usage=usage, error=f"gemini: {what} (code {code})")


@dataclass(frozen=True)
class GeminiAdapter:
    cfg: AgentConfig
    mints_session: ClassVar[bool] = True
    needs_prompt_file: ClassVar[bool] = False

    def build(self, request: TurnRequest, session_id_to_open: str | None) -> Invocation:
        argv = [*executable(self.cfg, EXECUTABLE), f"--prompt={PROMPT_TAIL}"]
        argv += ["--output-format", "json"]
        if request.session_id:
            argv += ["--resume", request.session_id]
        elif session_id_to_open:
            argv += ["--session-id", session_id_to_open]
        if self.cfg.model:
            argv += ["-m", self.cfg.model]
        argv += ["--approval-mode", "yolo" if request.allow_write else "plan", "--skip-trust"]
        argv += self.cfg.args
        return Invocation(argv, request.prompt.encode())

    def parse(
        self, stdout: str, stderr: str, exit_code: int | None, request: TurnRequest
    ) -> Parsed:
        obj = json_object(stdout) if stdout.strip() else None
        if obj is None:
            failure = json_object(stderr)
            if failure is not None and isinstance(failure.get("error"), dict):
                sid = failure.get("session_id")
                return _error(failure["error"], sid if isinstance(sid, str) else None, Usage())
            if stdout.strip():
                return malformed("gemini", "no JSON object", stdout)
            status = TurnStatus.QUOTA if QUOTA.search(stderr) else TurnStatus.ERROR
            return Parsed(status, error=f"gemini exited {exit_code}: {tail(stderr) or 'no output'}")
        sid = obj.get("session_id")
        session_id = sid if isinstance(sid, str) and sid else None
        usage = _usage(obj.get("stats"))
        if isinstance(obj.get("error"), dict):
            return _error(obj["error"], session_id, usage)
        response = obj.get("response")
        if not isinstance(response, str):
            return malformed("gemini", "the JSON object has no text 'response'", stdout)
        if exit_code != 0:
            why = tail(stderr) or "no error reported"
            return Parsed(
                TurnStatus.ERROR,
                session_id=session_id,
                usage=usage,
                error=f"gemini exited {exit_code}: {why}",
            )
        return Parsed(TurnStatus.OK, text=response, session_id=session_id, usage=usage)
