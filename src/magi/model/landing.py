"""Landing on record: each fix round's input, commit, e2e and gate, and how landing ended.

A round records what it was asked (the failing checks and review comments, as the read
step fetched them), what the fixer answered and what git measured (``fix``), the commit it
pushed (``commit``, None when the tree did not change) and e2e and the gate on that
commit. ``None`` for e2e or the gate means "not run" (a round that changed nothing runs
neither), never green.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from magi.model.fix_round import RoundInput
from magi.model.review import E2eResult, FixReport, Gate

__all__ = ["MAX_PATHS", "LandConflict", "Landing", "LandingRound"]

MAX_PATHS = 1000  # conflicting paths a round may name; more is a person's conflict anyway


class _Rec(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class LandConflict(_Rec):
    """A round that began with the base merged in and conflicting (the rebase's conflict,
    handed to the fixer): what git said, and what the fixer's head still left marked."""

    base: str  # the base commit merged in
    merge: str  # magi's merge commit, conflicts marked: the fixer's starting point
    paths: list[str]  # at most MAX_PATHS: publish refuses more (land_checks)
    said: str = ""  # git's own words
    left: list[str] = Field(default_factory=list)  # paths still holding conflict markers

    @property
    def resolved(self) -> bool:
        return not self.left


class LandingRound(_Rec):
    """One landing fix round on the PR's head ``head``."""

    round: int  # 1-based, as the App counted it
    head: str  # the head the job read: the push's lease
    input: RoundInput
    fix: FixReport | None = None
    changed: bool = False  # a new commit whose tree differs from head's
    commit: str | None = None  # what was pushed; None when nothing changed
    e2e: E2eResult | None = None
    gate: Gate | None = None
    at: datetime | None = None
    conflict: LandConflict | None = None  # the base conflicted: handed to the fixer

    @property
    def green(self) -> bool:
        """e2e and the gate both ran on the commit and passed."""
        return bool(self.e2e and self.e2e.passed and self.gate and self.gate.passed)


class Landing(_Rec):
    """The PR's landing: its fix rounds, and whether landing stopped (None: it did not)."""

    pr: int
    rounds: list[LandingRound] = Field(default_factory=list)
    # merged / closed: the run's status and merge; "conflict": a person resolves it
    outcome: Literal["blocked", "conflict"] | None = None
    reason: str | None = None
