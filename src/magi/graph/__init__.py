"""The competition graph: one module per node, run in the order of ``PIPELINE``.

Every node module has ``NAME``, ``STATUS`` and ``run(ctx: Context) -> None`` (the ``Node``
protocol); it skips what the record already holds and writes its state before the next
node starts, so a killed run resumes without paying again for finished seats. The runner
(``magi.graph.node.execute``) runs any sequence of nodes and loops.
"""

from __future__ import annotations

from magi.graph import (
    deliberate,
    e2e,
    fix,
    fold,
    gate,
    implement,
    judge,
    merge,
    prep,
    review,
    tally,
    verify,
    vote,
)
from magi.graph.context import Context
from magi.graph.node import Loop, Node, Stage, execute, mermaid, names


def _review_rounds(ctx: Context) -> int:
    return ctx.config.graph.review_rounds


# The winner's bounded road: review, e2e and fix each round until fix.done (clean, or a
# Stop(blocked) raised by fix), then the gate and the merge.
REVIEW_LOOP = Loop("review", (review, e2e, fix), until=fix.done, max_rounds=_review_rounds)

# The single source of truth for the order of the graph (README's diagram is made from it).
PIPELINE: tuple[Stage, ...] = (
    prep,
    implement,
    verify,
    judge,
    deliberate,
    vote,
    tally,
    fold,
    REVIEW_LOOP,
    gate,
    merge,
)

# `magi review BRANCH`: the same road on an existing branch (no competition).
REVIEW_PIPELINE: tuple[Stage, ...] = (REVIEW_LOOP, gate, merge)

__all__ = [
    "PIPELINE",
    "REVIEW_LOOP",
    "REVIEW_PIPELINE",
    "Context",
    "Loop",
    "Node",
    "Stage",
    "execute",
    "mermaid",
    "names",
]
