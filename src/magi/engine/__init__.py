"""The engine: preflight, start, resume, recount and fold; the only caller of the runner.

Every surface (the CLI, the demo, the Action's runner, the App's dispatcher) goes through
these functions, so the sequence preflight -> create -> context -> signals -> drive is
written once.
"""

from magi.engine.preflight import preflight
from magi.engine.session import Outcome, fold, moved_heads, recount, resume, start
from magi.engine.signals import Caught, interruptible
from magi.engine.start import (
    build_agents,
    context_for,
    create,
    drive,
    now,
    prepare_resume,
    take_current_budget,
)

__all__ = [
    "Caught",
    "Outcome",
    "build_agents",
    "context_for",
    "create",
    "drive",
    "fold",
    "interruptible",
    "moved_heads",
    "now",
    "preflight",
    "prepare_resume",
    "recount",
    "resume",
    "start",
    "take_current_budget",
]
