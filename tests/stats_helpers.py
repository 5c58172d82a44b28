"""Shared by several test modules (carried out of test_core_stats.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from magi.model.config import Config
from magi.model.run import Candidate, FileStat, Run, Seat, Tally

FIXTURE = Path(__file__).parent / "fixtures" / "report" / "run.json"


AT = datetime(2026, 12, 1, tzinfo=UTC)


KINDS = {"opus": "claude", "sonnet": "claude", "oc": "opencode", "j1": "claude", "j2": "opencode"}


def cand(label: str, produced: bool = True) -> Candidate:
    files = [FileStat(path="a.py", added=1, deleted=0)] if produced else []
    return Candidate(label=label, seat=f"impl-{label}", branch=f"b/{label}", files=files)


def base(run_id: str, seats: dict[str, str], **update: Any) -> Run:
    run = Run.model_validate_json(FIXTURE.read_text(encoding="utf-8"))
    agents = [{"id": a, "kind": k, "command": ["x"]} for a, k in KINDS.items()]
    held = {s: Seat(name=s, agent=a) for s, a in seats.items()}
    config = Config.model_validate({"agents": agents})
    return run.model_copy(update={"id": run_id, "config": config, "seats": held, **update})


def tally(winner: str) -> Tally:
    return Tally(winner=winner, judges=2, answered=2, quorum=True)
