"""``make bench``: what a 9-seat council costs magi itself, with instant in-process seats.

Nine seats split nine ways in round 1, five switch in the debate, the position passes in
round 2: two full rounds, a clerk after each, every turn through ``magi.seats.ask``
(artifacts, turn records, a save per answer). The seats answer instantly, so the figure
is magi's own CPU: goal <= 0.3 s per council, the median of a few repetitions.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from magi.agents.base import TurnRequest, TurnResult, TurnStatus
from magi.council.session import start
from magi.demo.council_scripted import reply
from magi.model.config import Config
from magi.state.store import Store

REPS = 5
SEATS = 9
GOAL_S = 0.3


@dataclass
class InstantSeat:
    """An agent that answers at once, in-process, as its scripted persona would."""

    id: str
    persona: str
    kind: str = "command"

    def run_turn(self, request: TurnRequest) -> TurnResult:
        text = reply(self.persona, request.node, request.prompt)
        return TurnResult(TurnStatus.OK, text=text or "", duration_s=0.001)


def personas() -> dict[str, str]:
    out = {f"s{i}": (f"switch:O{i}:A" if i <= 5 else f"says:O{i}") for i in range(1, SEATS + 1)}
    out["clerk"] = "clerk"
    return out


def config() -> Config:
    agents = [{"id": a, "kind": "command", "command": ["true"]} for a in personas()]
    seats = [{"agent": f"s{i}", "weight": 20 - i} for i in range(1, SEATS + 1)]
    return Config.model_validate(
        {
            "agents": agents,
            "graph": {"sessions": False},
            "council": {
                "clerk": "clerk",
                "panels": {"default": {"threshold": 0.5, "rounds": 2, "seats": seats}},
            },
        }
    )


def one(home: Path, seed: int) -> float:
    agents = {a: InstantSeat(a, p) for a, p in personas().items()}
    cpu0 = time.process_time()
    rec = start(
        Store(home),
        question="Which option should we take? " * 20,
        source="bench",
        mode="decision",
        config=config(),
        agents=agents,
        cwd=home,
        rand=random.Random(seed),
        environ={},
    )
    cpu = time.process_time() - cpu0
    assert rec.verdict == "passed", rec.reason
    assert rec.debate_rounds == 1
    return cpu


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="magi-bench-council-") as tmp:
        one(Path(tmp) / "warm", 99)  # imports and first-use caches are not the council's cost
        cpu = [one(Path(tmp) / f"home{rep}", rep) for rep in range(REPS)]
    m = statistics.median(cpu)
    print(
        f"magi council bench, {datetime.now(UTC):%Y-%m-%d}, {os.cpu_count()} cores, "
        f"python {sys.version.split()[0]}, {SEATS} instant seats, median of {REPS}"
    )
    verdict = "ok" if m <= GOAL_S else "MISSED"
    print(f"  {'magi CPU per 9-seat council':<32} {m:.3f} s{'':<18} goal <= {GOAL_S} s  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
