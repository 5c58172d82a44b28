"""``magi init --github --force`` over a workflow that is there: a person's edits are kept.

A workflow magi wrote ends with a stamp (``magi.config.workflow.stamp``): the digest of
the lines above it. Untouched, it is replaced. Edited since, or written before magi
stamped its workflows (so nobody can tell what in it is whose), the previous file is kept
beside the new one as ``magi.yml.old`` (GitHub runs only ``.yml`` and ``.yaml`` files),
and the command says so with the first line that differs; with a ``.old`` already
there, it refuses instead of overwriting either.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from magi.config.workflow import edited
from magi.errors import UsageError

__all__ = ["Replacement", "plan_replacement"]


@dataclass(frozen=True)
class Replacement:
    """What writing the new workflow over ``flow`` takes: where the old one is kept."""

    flow: Path
    keep: Path | None = None
    said: str = ""

    def apply(self, text: str) -> list[str]:
        """Keep the old file (if asked), write ``text``; the lines to print."""
        if self.keep is not None:
            self.keep.write_bytes(self.flow.read_bytes())
        self.flow.parent.mkdir(parents=True, exist_ok=True)
        self.flow.write_text(text, encoding="utf-8")
        return [self.said] if self.said else []


def _first_difference(old: str, new: str) -> str:
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), n=0, lineterm=""):
        if line.startswith("@@"):
            return line.split()[1].lstrip("-").split(",")[0]
    return "?"


def plan_replacement(flow: Path, new: str) -> Replacement:
    """How ``--force`` replaces ``flow`` with ``new``; a UsageError when it cannot keep what
    is there. Decided before anything is written."""
    if not flow.exists():
        return Replacement(flow)
    old = flow.read_text(encoding="utf-8", errors="replace")
    state = edited(old)
    if old == new or state is False:
        return Replacement(flow)
    keep = flow.with_name(flow.name + ".old")
    whose = (
        "has lines changed since magi wrote it"
        if state
        else "carries no stamp of an untouched magi-written file, so it may hold edits of yours"
    )
    if keep.exists():
        raise UsageError(
            f"{flow} {whose}, and {keep} (kept by an earlier --force) is still there: carry "
            f"over what you need from it, delete it, and run the command again"
        )
    line = _first_difference(old, new)
    said = (
        f"kept the previous workflow as {keep}: it {whose} (first difference at its line "
        f"{line}). GitHub does not run it: carry over what you need, then delete it"
    )
    return Replacement(flow, keep, said)
