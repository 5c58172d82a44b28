"""The edited-tests scan of one candidate: git's zero-context diff in, the record's flags out."""

from __future__ import annotations

from magi.core.compete.edited_tests import describe, edited_tests
from magi.graph.context import Context
from magi.model.run import Candidate, EditedTest


def scan(ctx: Context, c: Candidate, base: str, head: str) -> list[EditedTest]:
    """Existing test files ``c`` changed or deleted between ``base`` and ``head``."""
    found = edited_tests(ctx.git.removals(base, head), ctx.config.verify.tests)
    return [
        EditedTest(path=e.path, removed=list(e.removed), count=e.count, deleted=e.deleted)
        for e in found
    ]


def flag_lines(c: Candidate) -> list[str]:
    return [describe(e.path, e.removed, e.count, e.deleted) for e in c.tests_changed or []]


def judge(ctx: Context, c: Candidate) -> None:
    """Disqualify under ``blind.tests = "fail"``; say it in an event either way (lock held)."""
    if not c.tests_changed:
        return
    paths = ", ".join(e.path for e in c.tests_changed)
    if ctx.config.blind.tests == "fail" and c.disqualified is None:
        c.disqualified = f"edits existing tests: {paths}"
    ctx.event("implement", f"candidate {c.label}: edits existing tests {paths}", "warn")
