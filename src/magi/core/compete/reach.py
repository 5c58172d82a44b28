"""Whether a config can reach a tally at all: refused at preflight, before anything is paid.

``judges = 0`` with three candidates passed doctor and preflight and failed only after the
implement wave had been paid for (issue 7). Every shape of config that cannot end in an
elected winner is named here, as a sentence that says what to change.
"""

from __future__ import annotations

from magi.model.config import Config


def unreachable(config: Config) -> list[str]:
    """Why a run with ``config`` can never reach a tally (empty: it can)."""
    g = config.graph
    problems: list[str] = []
    if g.candidates > 1 and g.judges == 0:
        problems.append(
            f"[graph] judges = 0 with candidates = {g.candidates}: nobody can vote, so no "
            "tally is possible; set judges >= 1, or candidates = 1 for a single implementer"
        )
    return problems
