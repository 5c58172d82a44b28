"""``magi demo council``: a decision council offline, with scripted seats as command agents.

Three seats split three ways on a config format; the debate round moves one seat, and
the position passes by weight with the third seat's opinion kept as the minority.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

from magi.council.session import start
from magi.model.config import Config
from magi.state.council import CouncilRun
from magi.state.store import Store

QUESTION = "Which format should this tool's config file use: TOML, YAML or JSON?"
PERSONAS = {
    "melchior": ("says:TOML", 40, "maintainability"),
    "balthasar": ("switch:YAML:TOML", 30, "product"),
    "casper": ("says:JSON", 30, "skeptic"),
}


def demo_config(python: str) -> Config:
    """Three scripted seats with weights and personalities, and a scripted clerk."""
    module = "magi.demo.council_scripted"
    agents = [
        {"id": name, "kind": "command", "command": [python, "-m", module, persona]}
        for name, (persona, _, _) in PERSONAS.items()
    ]
    agents.append({"id": "clerk", "kind": "command", "command": [python, "-m", module, "clerk"]})
    seats = [
        {"agent": name, "weight": weight, "personality": personality}
        for name, (_, weight, personality) in PERSONAS.items()
    ]
    return Config.model_validate(
        {
            "agents": agents,
            "graph": {"sessions": False},
            "council": {
                "clerk": "clerk",
                "timeout": 120,
                "panels": {"default": {"threshold": 0.5, "rounds": 2, "seats": seats}},
            },
        }
    )


def run_council_demo(where: Path | None, *, python: str, seed: int = 7) -> tuple[CouncilRun, Path]:
    """Run the demo council; (record, the magi home holding it)."""
    home = Path(where) if where is not None else Path(tempfile.mkdtemp(prefix="magi-council-demo-"))
    home.mkdir(parents=True, exist_ok=True)
    store = Store(home / "magi-home")
    rec = start(
        store,
        question=QUESTION,
        source="demo",
        mode="decision",
        config=demo_config(python),
        cwd=home,
        rand=random.Random(seed),
    )
    return rec, home
