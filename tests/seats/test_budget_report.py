"""The report says which dollars a CLI reported and which magi estimated from tokens."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from rich.console import Console

from magi import report
from magi.model.run import ModelTokens, Run, Task, Turn, Usage
from magi.report.costs import ESTIMATE_NOTE

T0 = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
# 100k uncached input and 10k output of gpt-5-codex at magi's defaults: 0.125 + 0.1
CODEX = Usage(
    input_tokens=100_000, models={"gpt-5-codex": ModelTokens(input=100_000, output=10_000)}
)


def _turn(seat: str, usage: Usage, seconds: float = 10.0) -> Turn:
    return Turn(
        seat=seat,
        node="implement",
        turn=1,
        agent="x",
        status="ok",
        started_at=T0,
        duration_s=seconds,
        usage=usage,
    )


def _run() -> Run:
    return Run(
        id="20261129-120000-abcd",
        created_at=T0,
        repo="/r",
        base="main",
        seed=1,
        task=Task(original="t", cleaned="t"),
        turns=[
            _turn("impl-A", Usage(cost_usd=0.0123)),
            _turn("impl-B", CODEX),
            _turn("impl-C", Usage(), seconds=42.0),
        ],
    )


def test_json_keeps_the_estimated_part_and_the_unmetered_seconds_apart() -> None:
    usage = report.report_json(_run())["usage"]
    assert (usage["impl-A"]["cost_usd"], usage["impl-A"]["estimated_usd"]) == (0.0123, None)
    assert (usage["impl-B"]["cost_usd"], usage["impl-B"]["estimated_usd"]) == (0.225, 0.225)
    assert usage["impl-C"]["cost_usd"] is None
    assert usage["impl-C"]["unmetered_seconds"] == 42.0
    assert usage["total"]["cost_usd"] == 0.2373
    assert usage["total"]["estimated_usd"] == 0.225


def test_text_marks_the_estimate_and_explains_the_marks() -> None:
    buf = io.StringIO()
    Console(file=buf, width=250).print(report.render(_run()))
    text = buf.getvalue()
    assert "$0.0123" in text
    assert "~$0.2250 est." in text
    assert "~$0.2373 ($0.2250 est.)" in text
    assert ESTIMATE_NOTE in text


def test_the_pull_requests_comment_marks_the_estimate_without_strikethrough() -> None:
    md = report.render_markdown(_run())
    assert "| impl-A | 1 | 10.0 | - | - | - | $0.0123 |" in md
    assert "| impl-B | 1 | 10.0 | 100,000 | - | - | \\~$0.2250 est. |" in md
    assert "| impl-C | 1 | 42.0 | - | - | - | - |" in md
    assert "\\~ estimated from tokens" in md


def test_a_run_of_reported_costs_only_needs_no_note() -> None:
    run = _run()
    run.turns = run.turns[:1] * 2
    md = report.render_markdown(run)
    assert "$0.0246" in md
    assert "estimated from tokens" not in md
