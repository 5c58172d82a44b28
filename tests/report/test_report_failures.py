"""The report explains failures: reasons, failover chains, where a run stopped, hollow wins."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from magi import report
from magi.graph.deliberate import why_no_deliberation
from magi.model.run import Ranking, Run, RunStatus, Seat, Tally

FIXTURES = Path(__file__).parents[1] / "fixtures" / "report"


def _load(name: str = "stalled.json", **update: object) -> Run:
    run = Run.model_validate_json((FIXTURES / name).read_text(encoding="utf-8"))
    return run.model_copy(update=update)


def _text(run: Run) -> str:
    buf = io.StringIO()
    Console(file=buf, width=250).print(report.render(run))
    return buf.getvalue()


def test_failed_seat_shows_its_reason_and_chain() -> None:
    """Each holder of a failed seat is listed with how it lost the seat, in text and JSON."""
    run = _load(status=RunStatus.FAILED, reason="no quorum")
    text = _text(run)
    chain = (
        "codex timeout (codex: Reconnecting... waiting for network) -> "
        "gemini-cli error (gemini: not logged in (code 41))"
    )
    assert chain in text
    seats = {s["seat"]: s for s in report.report_json(run)["seats"]}
    assert seats["impl-C"]["status"] == "error"
    assert seats["impl-C"]["reason"] == "gemini: not logged in (code 41)"
    assert [h["agent"] for h in seats["impl-C"]["holders"]] == ["codex", "gemini-cli"]
    assert seats["impl-C"]["holders"][0]["status"] == "timeout"
    assert seats["impl-A"]["status"] == "ok"


def test_blind_reasons_keep_the_cli_words_but_not_its_name() -> None:
    """Before the tally a reason loses the agent's name, not what the CLI said."""
    warnings = report.report_json(_load())["warnings"]
    assert (
        "impl-C failed over: agent 1 timeout ([redacted]: Reconnecting... waiting for network)"
        " -> agent 2 error ([redacted]: not logged in (code 41))"
    ) in warnings


def test_the_seat_names_the_judge_after_a_failover() -> None:
    """Who sat in a judge seat comes from the seat, not from the first agent seated."""
    run = _load(status=RunStatus.FAILED)
    run.seats["judge-1"] = Seat(
        name="judge-1", agent="judge-agent-w", failover_from=["judge-agent-x"]
    )
    data = report.report_json(run)
    assert data["judges"][0]["agent"] == "judge-agent-w"
    assert data["candidates"][2]["agent"] == "gemini-cli"  # impl-C failed over too
    assert "| judge-1 | judge-agent-w |" in report.render_markdown(run)


def test_the_node_a_run_stopped_in_is_timed() -> None:
    """A stalled run shows the node it stopped in, timed up to the stop."""
    run = _load()
    assert report.report_json(run)["stopped"] == {"node": "vote", "seconds": 25.0, "stopped": True}
    assert "vote        25.0s (stopped here: stalled)" in _text(run)
    assert "| vote (stopped here: stalled) | 25.0 |" in report.render_markdown(run)
    running = _load(status=RunStatus.VOTING)
    assert "vote        25.0s (still running: voting)" in _text(running)


def test_a_run_that_ended_well_stopped_nowhere() -> None:
    """A ready run has no stopped node, and its timings are only the recorded ones."""
    data = report.report_json(_load("run.json"))
    assert data["stopped"] is None
    assert data["warnings"] == []


def test_uncontested_win_because_others_failed_is_said_first() -> None:
    """A win nobody contested because the rivals failed is a warning at the top, with why."""
    run = _load(
        status=RunStatus.READY,
        reason="candidate A won",
        judge_skipped=True,
        tally=Tally(
            winner="A", counts={"A": 0}, judges=0, answered=0, quorum=True, uncontested=True
        ),
    )
    first = report.report_json(run)["warnings"][0]
    assert first.startswith("uncontested: A won only because no other candidate could be judged")
    assert "B claimed no change is needed" in first
    assert "C disqualified: produced nothing" in first
    text = _text(run)
    assert (
        text.index("read this first")
        < text.index("uncontested: A won")
        < text.index("\ncandidates")
    )
    assert (
        "uncontested: A won only because" in report.render_markdown(run).split("### Candidates")[0]
    )


def test_kept_worktrees_name_the_fold_command() -> None:
    """A failed run that keeps candidate worktrees says which, and how to remove them."""
    run = _load(status=RunStatus.FAILED)
    run.candidates[0].worktree = "/tmp/wt/A"
    assert (
        f"worktrees kept for A: `magi fold {run.id}` removes them"
        in (report.report_json(run)["warnings"])
    )


def test_no_deliberation_says_what_happened() -> None:
    """No ranking, one ranking and agreement are three different reasons not to deliberate."""
    lost = [Ranking(seat="judge-1", status="error"), Ranking(seat="judge-2", status="timeout")]
    assert why_no_deliberation(lost, 2) == (
        "no judge ranked the candidates (judge-1 error, judge-2 timeout)"
    )
    one = [Ranking(seat="judge-1", status="ok", ranking=["A"]), lost[1]]
    assert why_no_deliberation(one, 2) == "only judge-1 ranked the candidates (judge-2 timeout)"
    two = [one[0], Ranking(seat="judge-2", status="ok", ranking=["A", "B"])]
    assert why_no_deliberation(two, 2) == "first choices agree"
    assert why_no_deliberation(two, 0) == "deliberate_rounds = 0"
    assert why_no_deliberation([], 2) == "no judge ranked the candidates (no judge sat)"


def test_an_agent_failure_kind_is_named_in_the_chain() -> None:
    """A turn that failed for auth says so beside its reason."""
    run = _load(status=RunStatus.FAILED)
    run.turns[3] = run.turns[3].model_copy(update={"failure": "auth"})
    seats = {s["seat"]: s for s in report.report_json(run)["seats"]}
    assert seats["impl-C"]["holders"][1]["failure"] == "auth"
    assert "gemini-cli error [auth] (gemini: not logged in (code 41))" in _text(run)


def test_an_interrupted_run_says_where_it_stopped() -> None:
    """Ctrl-C leaves a run interrupted: the report names it and times the node it was in."""
    run = _load(status=RunStatus.INTERRUPTED, reason="SIGINT: resume with magi run --resume")
    data = report.report_json(run)
    assert data["stopped"]["node"] == "vote"
    assert "run interrupted: SIGINT: resume with magi run --resume" in data["warnings"]
    assert "(stopped here: interrupted)" in _text(run)
