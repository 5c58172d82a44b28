"""The competition graph: one module per node, run in the order of ``PIPELINE``.

Every node has the same signature, ``run(ctx: Context) -> None``; it skips what the record
already holds and writes its state before the next node starts, so a killed run resumes
without paying again for finished seats.
"""

from __future__ import annotations

import itertools
from types import ModuleType

from magi.graph import deliberate, fold, implement, judge, prep, tally, verify, vote
from magi.graph.context import Context
from magi.state.model import RunStatus

# The single source of truth for the order of the graph (README's diagram is made from it).
PIPELINE: tuple[ModuleType, ...] = (prep, implement, verify, judge, deliberate, vote, tally, fold)

NODE_STATUS: dict[str, RunStatus] = {
    "prep": RunStatus.PREPARING,
    "implement": RunStatus.IMPLEMENTING,
    "verify": RunStatus.VERIFYING,
    "judge": RunStatus.JUDGING,
    "deliberate": RunStatus.DELIBERATING,
    "vote": RunStatus.VOTING,
    "tally": RunStatus.TALLYING,
    "fold": RunStatus.FOLDING,
}


def mermaid() -> str:
    """The README diagram, drawn from PIPELINE."""
    names = [m.NAME for m in PIPELINE]
    lines = ["flowchart LR"]
    lines += [f"  {a} --> {b}" for a, b in itertools.pairwise(names)]
    return "\n".join(lines)


__all__ = ["NODE_STATUS", "PIPELINE", "Context", "mermaid"]
