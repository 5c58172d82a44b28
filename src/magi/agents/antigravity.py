"""Antigravity (``agy -p --output-format json``): argv and output parsing, largely UNVERIFIED.

No installable package ships the ``agy`` binary (README §5), so nothing here was checked
against a real agy. What is unverified, exactly:

- the flags ``--output-format json``, ``--conversation <id>``, ``--print-timeout <N>s``,
  ``--add-dir``, ``--model`` and ``--dangerously-skip-permissions`` (from the spec magi was
  seeded from and from the third-party agy-headless-bridge; none seen in a help text);
- that ``-p`` with no argument reads the prompt from stdin (magi sends it there, as for claude);
- the output: one JSON object carrying ``conversation_id`` and the reply, whose key is
  unknown, so ``response``, ``result``, ``text`` and ``output`` are tried in that order;
  a ``usage`` object with ``input_tokens``/``output_tokens`` is read if present (priced at
  the configured ``model``: no model name in the output is known);
- the report that ``agy -p`` prints nothing when stdout is not a TTY (then every turn fails
  here with a message saying so, rather than passing an empty reply on);
- the quota signal: a non-zero exit whose output matches quota/rate limit/RESOURCE_EXHAUSTED/429.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Annotated, ClassVar

from magi.agents.base import TurnRequest, TurnStatus, Usage
from magi.agents.cli import Invocation, Parsed, executable, malformed, tail
from magi.agents.events import Event, Int, Lenient, Str, document
from magi.agents.live import LiveLine, Signals
from magi.core.seats.clistate import CliState, Login, Root
from magi.model.config import AgentConfig
from magi.model.run import ModelTokens

EXECUTABLE = "agy"
VERSION_ARGV = ("agy", "--version")
KEY_ENV_VARS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")

# agy keeps its state beside gemini's; its logins are gemini's (docs/jail.md).
STATE = CliState(
    (
        Root("~/.gemini", (Login("oauth_creds.json"), Login("google_accounts.json"))),
        Root("~/.antigravity"),
    )
)
# UNVERIFIED (no agy to run): the Google endpoints gemini reaches, for the egress allowlist.
EGRESS_HOSTS = (
    "generativelanguage.googleapis.com",
    "cloudcode-pa.googleapis.com",
    "oauth2.googleapis.com",
)
REPLY_KEYS = ("response", "result", "text", "output")

QUOTA = re.compile(r"quota|rate[ _-]?limit|RESOURCE_EXHAUSTED|\b429\b|resets in", re.IGNORECASE)
# UNVERIFIED (no agy to run): the Google-stack wording gemini uses, and plain node errors.
SIGNALS = Signals(
    unreachable=re.compile(r"fetch failed|ENOTFOUND|ECONNREFUSED|Unable to connect", re.I),
    unauthenticated=re.compile(r"not logged in|UNAUTHENTICATED|API key not valid|sign in", re.I),
)


class AgyUsage(Event):
    input_tokens: Int = None
    output_tokens: Int = None

    def usage(self, model: str | None) -> Usage:
        """The output names no model (as far as is known): the configured one is priced."""
        models: dict[str, ModelTokens] = {}
        if model and (self.input_tokens is not None or self.output_tokens is not None):
            models[model] = ModelTokens(
                input=self.input_tokens or 0, output=self.output_tokens or 0
            )
        return Usage(
            input_tokens=self.input_tokens, output_tokens=self.output_tokens, models=models
        )


class AgyOutput(Event):
    """What ``agy -p --output-format json`` is assumed to print (see the module docstring)."""

    conversation_id: Str = None
    response: Str = None
    result: Str = None
    text: Str = None
    output: Str = None
    usage: Annotated[AgyUsage | None, Lenient] = None

    def reply(self) -> str | None:
        return next((r for r in (self.response, self.result, self.text, self.output) if r), None)


@dataclass(frozen=True)
class AntigravityAdapter:
    cfg: AgentConfig
    mints_session: ClassVar[bool] = False
    needs_prompt_file: ClassVar[bool] = False
    signals: ClassVar[Signals] = SIGNALS

    def live(self, line: str) -> LiveLine:
        return LiveLine(line)

    def build(self, request: TurnRequest, session_id_to_open: str | None) -> Invocation:
        argv = [*executable(self.cfg, EXECUTABLE), "-p", "--output-format", "json"]
        if self.cfg.model:
            argv += ["--model", self.cfg.model]
        # Without --add-dir agy is reported to work in a scratch workspace, not the worktree.
        argv += ["--add-dir", str(request.cwd)]
        # agy's own print timeout must not cut a turn short of magi's budget for the node.
        argv += ["--print-timeout", f"{max(1, math.ceil(request.timeout))}s"]
        if request.allow_write:
            argv.append("--dangerously-skip-permissions")
        if request.session_id:
            argv += ["--conversation", request.session_id]
        argv += self.cfg.args
        return Invocation(argv, request.prompt.encode())

    def parse(
        self, stdout: str, stderr: str, exit_code: int | None, request: TurnRequest
    ) -> Parsed:
        out = document(stdout, AgyOutput) if stdout.strip() else None
        session_id = (out.conversation_id or None) if out is not None else None
        if exit_code != 0:
            both = f"{stderr}\n{stdout}"
            status = TurnStatus.QUOTA if QUOTA.search(both) else TurnStatus.ERROR
            why = tail(stderr) or tail(stdout) or "no output"
            return Parsed(status, session_id=session_id, error=f"agy exited {exit_code}: {why}")
        if not stdout.strip():
            return Parsed(
                TurnStatus.ERROR,
                error="agy printed nothing (agy -p is reported to "
                "print nothing when stdout is not a terminal; unverified)",
            )
        if out is None:
            return malformed("agy", "no JSON object", stdout)
        reply = out.reply()
        if reply is None:
            keys = ", ".join(REPLY_KEYS)
            return malformed("agy", f"the JSON object has none of {keys}", stdout)
        u = out.usage or AgyUsage()
        return Parsed(
            TurnStatus.OK, text=reply, session_id=session_id, usage=u.usage(self.cfg.model)
        )
