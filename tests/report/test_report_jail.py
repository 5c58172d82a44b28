"""The report states the jail a run had, and lists each candidate's edited tests."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from magi import report
from magi.model.run import EditedTest, Jail, Run

FIXTURE = Path(__file__).parents[1] / "fixtures" / "report" / "run.json"


def _text(run: Run) -> str:
    buf = io.StringIO()
    Console(file=buf, width=300).print(report.render(run))
    return buf.getvalue()


def test_the_header_says_which_jail_the_run_had() -> None:
    """mode and reason in the header; an old record says it was not recorded."""
    run = Run.model_validate_json(FIXTURE.read_text(encoding="utf-8"))
    assert "not recorded" in _text(run)
    run.jail = Jail(mode="off", configured="auto", reason="bwrap not found: agents run unjailed")
    assert "off (bwrap not found: agents run unjailed)" in _text(run)


def test_edited_tests_are_in_the_candidate_flags() -> None:
    """The file and the removed lines appear beside the candidate."""
    run = Run.model_validate_json(FIXTURE.read_text(encoding="utf-8"))
    run.candidates[0].tests_changed = [
        EditedTest(path="tests/test_core.py", removed=["assert parse('') == []"], count=1)
    ]
    text = _text(run)
    assert "edits existing test tests/test_core.py" in text
    assert "assert parse('') == []" in text
