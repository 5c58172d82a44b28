"""Any command as an agent (``kind = "command"``): placeholders, session lines, exit codes.

The contract a command agent is written against:

- argv is the config's ``command`` plus ``args``, run directly (never through a shell), with
  ``{prompt_file}``, ``{cwd}``, ``{label}`` and ``{session}`` replaced inside each argument;
- the prompt is on stdin and in the file ``{prompt_file}`` / ``$MAGI_PROMPT_FILE``; the
  environment also holds MAGI_SEAT, MAGI_TURN, MAGI_ALLOW_WRITE ("1"/"0"), MAGI_RUN,
  MAGI_NODE, MAGI_LABEL and MAGI_SESSION, and MAGI_STATE_DIR: a directory of the seat's own
  that outlives the turn (inside the jail, the only place a judge seat may write);
- the reply is stdout, stripped;
- to keep a conversation, print ``MAGI-SESSION: <id>`` on stderr; magi passes that id back
  as ``{session}`` / ``$MAGI_SESSION`` on the seat's next turn (an id reported once is kept
  until another is reported);
- exit 75 (EX_TEMPFAIL), or a failing exit with "rate limit" or "quota" on stderr, means the
  agent hit a quota: the seat is refunded rather than failed. Any other non-zero exit is an
  error;
- to report what a turn spent, print ``MAGI-USAGE: {json}`` on stderr, one object per
  line (several lines add up): ``input_tokens`` (uncached), ``cached_tokens``,
  ``output_tokens``, ``cost_usd`` (your own figure) and ``model`` (the model that spent the
  tokens, priced by ``[budget.prices]``; default: the agent's ``model``), every key
  optional. A line that is not such an object fails the turn, naming the line: a budget
  must not silently read a typo as nothing spent. A turn that reports neither dollars nor
  priced tokens has its wall time counted by ``[budget] run_minutes``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from magi.agents.base import TurnRequest, TurnStatus
from magi.agents.cli import Invocation, Parsed, tail
from magi.agents.live import NO_SIGNALS, LiveLine, Signals
from magi.core.seats.clistate import CliState
from magi.model.config import AgentConfig
from magi.model.run import ModelTokens, Usage

EXECUTABLE = None  # whatever the config names
VERSION_ARGV: tuple[str, ...] = ()
KEY_ENV_VARS: tuple[str, ...] = ()

STATE = CliState()  # a command's state is its seat's MAGI_STATE_DIR
EGRESS_HOSTS: tuple[str, ...] = ()  # a command names its own: [sandbox] egress, a base URL
EX_TEMPFAIL = 75
SESSION_LINE = re.compile(r"^MAGI-SESSION:\s*(\S+)\s*$", re.MULTILINE)
USAGE_LINE = re.compile(r"^[ \t]*MAGI-USAGE:.*$", re.MULTILINE)


class Reported(BaseModel):
    """One ``MAGI-USAGE`` line, strictly: an unknown key is an error, not a silent zero."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    input_tokens: int | None = Field(None, ge=0)
    cached_tokens: int | None = Field(None, ge=0)
    output_tokens: int | None = Field(None, ge=0)
    cost_usd: float | int | None = Field(None, ge=0)
    model: str | None = Field(None, min_length=1, max_length=200)

    def usage(self, default_model: str | None) -> Usage:
        model = self.model or default_model
        tokens = (self.input_tokens, self.cached_tokens, self.output_tokens)
        counted = model is not None and any(t is not None for t in tokens)
        split = ModelTokens(
            input=self.input_tokens or 0,
            cached=self.cached_tokens or 0,
            output=self.output_tokens or 0,
        )
        total_in = (
            None
            if self.input_tokens is None and self.cached_tokens is None
            else ((self.input_tokens or 0) + (self.cached_tokens or 0))
        )
        return Usage(
            input_tokens=total_in,
            output_tokens=self.output_tokens,
            cached_tokens=self.cached_tokens,
            cost_usd=None if self.cost_usd is None else float(self.cost_usd),
            models={model: split} if counted and model else {},
        )


def reported_usage(stderr: str, default_model: str | None) -> tuple[Usage, str | None]:
    """What the ``MAGI-USAGE`` lines of ``stderr`` add up to, and why the first line that
    is not usage is not (the lines that are still count: a cap errs early, not late). An
    indented one is one too, never silently read as nothing spent; a line that only
    mentions the word (a shell's ``set -x`` trace of an ``echo``) is no usage line."""
    total, bad = Usage(), None
    lines = [line for line in stderr.splitlines() if line.lstrip().startswith("MAGI-USAGE:")]
    for n, line in enumerate(lines, start=1):
        text = line.partition("MAGI-USAGE:")[2].strip()
        try:
            if not line.startswith("MAGI-USAGE:"):
                raise ValueError("the line must begin with MAGI-USAGE: (no indent)")
            total = total + Reported.model_validate(json.loads(text)).usage(default_model)
        except (ValueError, ValidationError) as e:
            why = e.errors()[0]["msg"] if isinstance(e, ValidationError) else str(e)
            bad = bad or f"MAGI-USAGE line {n} ({line.strip()[:80]!r}) is not usage: {why}"
    return total, bad


QUOTA = re.compile(r"rate limit|quota", re.IGNORECASE)


def substitute(arg: str, values: dict[str, str]) -> str:
    """Replace the known placeholders in one argument; other braces are left as written."""
    for name, value in values.items():
        arg = arg.replace("{" + name + "}", value)
    return arg


@dataclass(frozen=True)
class CommandAdapter:
    cfg: AgentConfig
    mints_session: ClassVar[bool] = False
    needs_prompt_file: ClassVar[bool] = True
    signals: ClassVar[Signals] = NO_SIGNALS  # a command's words mean what its author says

    def live(self, line: str) -> LiveLine:
        return LiveLine(None if SESSION_LINE.match(line) or USAGE_LINE.match(line) else line)

    def build(self, request: TurnRequest, session_id_to_open: str | None) -> Invocation:
        values = {
            "prompt_file": str(request.prompt_file or ""),
            "cwd": str(request.cwd),
            "label": request.label,
            "session": request.session_id or "",
        }
        argv = [substitute(a, values) for a in [*(self.cfg.command or []), *self.cfg.args]]
        return Invocation(argv, request.prompt.encode())

    def parse(
        self, stdout: str, stderr: str, exit_code: int | None, request: TurnRequest
    ) -> Parsed:
        reported = SESSION_LINE.findall(stderr)
        session_id = reported[-1] if reported else request.session_id
        usage, bad = reported_usage(stderr, self.cfg.model)
        # Protocol, not part of an error message.
        stderr = USAGE_LINE.sub("", SESSION_LINE.sub("", stderr))
        if exit_code == EX_TEMPFAIL or (exit_code != 0 and QUOTA.search(stderr)):
            why = tail(stderr) or f"exit {exit_code}"
            return Parsed(
                TurnStatus.QUOTA, session_id=session_id, usage=usage, error=f"command: {why}"
            )
        if exit_code != 0:
            why = tail(stderr) or "no stderr"
            return Parsed(
                TurnStatus.ERROR,
                session_id=session_id,
                usage=usage,
                error=f"command exited {exit_code}: {why}",
            )
        if bad is not None:
            return Parsed(
                TurnStatus.ERROR, session_id=session_id, usage=usage, error=f"command: {bad}"
            )
        return Parsed(TurnStatus.OK, text=stdout.strip(), session_id=session_id, usage=usage)
