"""A landing fix round's input: the failing checks and review comments, as data.

The read step of ``magi action land`` fetches these with the job's read-only token; the
agents step reads them back from a file and ``core.review.land_prompt`` turns them into one
prompt for the fixer seat. Everything in them came from CI logs and other people's
comments, so ``quote`` fences each as data in a fence longer than any backtick run inside
it: an instruction in a log tail or a review is text to weigh, never an order.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

TAIL_CHARS = 4000
_TICKS = re.compile(r"`+")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FailedCheck(_Strict):
    """One red check: its name, conclusion, and what its output and annotations say."""

    name: str
    conclusion: str
    summary: str = ""
    text: str = ""
    annotations: list[str] = Field(default_factory=list)
    log: str = ""  # the tail of the job's log, where GitHub Actions ran it (scrubbed)


class ReviewNote(_Strict):
    """One review or review comment asking for a change."""

    login: str
    body: str
    path: str | None = None
    line: int | None = None


class RoundInput(_Strict):
    """What one fix round is asked to address, as the read step wrote it."""

    pr: int
    run: str
    head: str  # the head the job read: the push's lease
    base: str = ""
    base_ref: str = ""  # the base branch's name: its tip is what a conflict round merges
    checks: list[FailedCheck] = Field(default_factory=list)
    reviews: list[ReviewNote] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.checks and not self.reviews


def quote(text: str) -> str:
    """``text`` in a fence no backtick run inside it can close."""
    longest = max((len(m) for m in _TICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text.rstrip()}\n{fence}"


def tail(text: str, limit: int = TAIL_CHARS) -> str:
    """The last ``limit`` characters of a log, cut at a line."""
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    return "[...]\n" + cut.split("\n", 1)[-1]
