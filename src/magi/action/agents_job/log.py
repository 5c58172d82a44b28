"""The live job log: each node and seat on its own line, as GitHub shows a step's output.

A job log is readable by everyone who can read the repository, and GitHub parses lines that
start with ``::`` as workflow commands (``::add-mask::``, ``::stop-commands::``). So agent
text that reaches the log (an error, a failover note) goes through the posting gate with
authors hidden, continuation lines are indented, and ``::`` is broken up. The log is
written while the run is blind, so it is as reticent as the record published before the
tally (``magi.report.before_tally``): an implementer seat's end is logged without its
label or its CLI's words, and a hand-on says only that a seat passed on; the run's
record on the runner (``magi show``) holds the whole of both.

A staged job (``magi.core.seats.runners``: it runs on some of the roster's labels, and its
labels are public) says less still: which candidate it worked on would say which agent
wrote it, so no implementer seat and no candidate is named at all, not even when asked.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Sequence
from typing import TextIO

from magi.core.threads.posting import Policy, gate
from magi.model.config import AgentConfig
from magi.report.before_tally import public_event

__all__ = ["LogReporter"]

# A candidate or an implementer seat, by its label: what a staged job's log leaves out.
_NAMED = re.compile(
    r"\b(?:[Cc]andidates? [A-Z]{1,2}\b(?:(?:, | and )[A-Z]{1,2}\b)*|impl-[A-Z]{1,2}\b)"
    r"|· [A-Z]{1,2}\b"  # a seat's place, "implement · B" (magi.core.person.asking.where)
    r"|^[A-Z]{1,2}(?=: )",  # a line about a tree by its name, "B: its tree was not sound"
    re.M,
)


class LogReporter:
    """Implements ``magi.seats.Reporter`` for a job log (no terminal, no redraws)."""

    def __init__(self, out: TextIO | None = None, roster: Sequence[AgentConfig] = ()) -> None:
        self.out = out or sys.stdout
        self.started = time.monotonic()
        self.policy = Policy(roster=roster, revealed=False, limit=1 << 20)
        self.staged = False

    def in_stages(self) -> LogReporter:
        """This job is one stage of a run (its labels are public): name no candidate."""
        self.staged = True
        return self

    def with_roster(self, roster: Sequence[AgentConfig]) -> LogReporter:
        """The same log, now hiding this roster's names too."""
        self.policy = Policy(roster=roster, revealed=False, limit=1 << 20)
        return self

    def _line(self, text: str, command: str = "") -> None:
        elapsed = int(time.monotonic() - self.started)
        safe = gate(text, self.policy, "log").text.replace("::", ": :").rstrip("\n")
        safe = safe.replace("\n", "\n    ")
        self.out.write(f"{command}[{elapsed // 60:3d}:{elapsed % 60:02d}] {safe}\n")
        self.out.flush()

    def node(self, name: str) -> None:
        self._line(f"node {name}")

    def seat(self, seat: str, state: str, detail: str = "") -> None:
        if seat.startswith("impl-") and (state != "asked" or self.staged):
            # When and in what order implementer seats end would tell them apart (their
            # speed, a timeout the config gives one agent): the log counts, it names none.
            detail = "which, and its CLI's words: the run record on this runner (magi show)"
            seat = "an implementer seat"
        self._line(f"  {seat}: {state}" + (f" ({detail})" if detail else ""))

    def note(self, message: str, level: str = "info") -> None:
        prefix = {"warn": "::warning::", "error": "::error::"}.get(level, "")
        said = public_event(message)
        if self.staged:
            said = _NAMED.sub("a candidate", said)
        self._line(said, prefix)
