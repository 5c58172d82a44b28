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
- a command reports no tokens and no cost: its turns' wall time is what ``[budget]
  run_minutes`` counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from magi.agents.base import TurnRequest, TurnStatus
from magi.agents.cli import Invocation, Parsed, tail
from magi.agents.live import NO_SIGNALS, LiveLine, Signals
from magi.model.config import AgentConfig

EXECUTABLE = None  # whatever the config names
VERSION_ARGV: tuple[str, ...] = ()
KEY_ENV_VARS: tuple[str, ...] = ()
EX_TEMPFAIL = 75
SESSION_LINE = re.compile(r"^MAGI-SESSION:\s*(\S+)\s*$", re.MULTILINE)
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
        return LiveLine(None if SESSION_LINE.match(line) else line)

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
        stderr = SESSION_LINE.sub("", stderr)  # protocol, not part of an error message
        if exit_code == EX_TEMPFAIL or (exit_code != 0 and QUOTA.search(stderr)):
            why = tail(stderr) or f"exit {exit_code}"
            return Parsed(TurnStatus.QUOTA, session_id=session_id, error=f"command: {why}")
        if exit_code != 0:
            why = tail(stderr) or "no stderr"
            return Parsed(
                TurnStatus.ERROR, session_id=session_id, error=f"command exited {exit_code}: {why}"
            )
        return Parsed(TurnStatus.OK, text=stdout.strip(), session_id=session_id)
