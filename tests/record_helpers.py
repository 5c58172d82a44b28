"""Shared by several test modules (carried out of test_app_records.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from magi.model.run import Run

FIXTURES = Path(__file__).parent / "fixtures"


REPORT = FIXTURES / "report" / "run.json"


def run(run_id: str, **update: Any) -> Run:
    base = Run.model_validate_json(REPORT.read_text(encoding="utf-8"))
    return base.model_copy(update={"id": run_id, **update})


def text(r: Run) -> str:
    return r.model_dump_json(by_alias=True, indent=2) + "\n"
