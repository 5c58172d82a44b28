"""The competition graph: one module per node, run in the order of ``PIPELINE``.

Every node module has ``NAME``, ``STATUS`` and ``run(ctx: Context) -> None`` (the ``Node``
protocol); it skips what the record already holds and writes its state before the next
node starts, so a killed run resumes without paying again for finished seats. The runner
(``magi.graph.node.execute``) runs any sequence of nodes and loops.
"""

from __future__ import annotations

from magi.graph import deliberate, fold, implement, judge, prep, tally, verify, vote
from magi.graph.context import Context
from magi.graph.node import Loop, Node, Stage, execute, mermaid, names

# The single source of truth for the order of the graph (README's diagram is made from it).
PIPELINE: tuple[Stage, ...] = (prep, implement, verify, judge, deliberate, vote, tally, fold)

__all__ = ["PIPELINE", "Context", "Loop", "Node", "Stage", "execute", "mermaid", "names"]
