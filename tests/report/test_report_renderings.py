"""One view, three renderings: text, JSON and markdown say the same thing about a run."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from magi import report
from magi.model.run import Run
from magi.report.markdown import comments

FIXTURES = Path(__file__).parents[1] / "fixtures" / "report"
AUTHORS = ("opus-agent", "sonnet-agent", "oc-agent", "codex", "gemini-cli")
JUDGES = ("judge-agent-x", "judge-agent-y", "judge-agent-z")


def load(name: str) -> Run:
    return Run.model_validate_json((FIXTURES / name).read_text(encoding="utf-8"))


def three_ways(run: Run) -> tuple[str, dict[str, object], str]:
    buf = io.StringIO()
    Console(file=buf, width=250).print(report.render(run))
    return buf.getvalue(), report.report_json(run), report.render_markdown(run)


def test_tallied_run_reads_the_same_three_ways() -> None:
    """Same winner, labels, counts and authors in the text, the JSON and the markdown."""
    text, data, md = three_ways(load("run.json"))
    assert data["winner"] == "A"
    assert "A <- winner" in text
    assert "| A (winner) |" in md
    assert "**Winner:** A" in md
    for label in ("A", "B", "C"):
        assert re.search(rf"^{label}\s", text, re.M), label
        assert f"| {label} " in md, label
    assert [c["label"] for c in data["candidates"]] == ["A", "B", "C"]  # type: ignore[index]
    assert data["tally"]["counts"] == {"A": 2, "B": 1}  # type: ignore[index]
    assert "A 2, B 1" in text
    assert "A 2, B 1" in md
    for author in ("opus-agent", "sonnet-agent", "oc-agent", "judge-agent-x"):
        assert author in text
        assert author in json.dumps(data)
        assert author in md


def test_stalled_run_is_blind_in_all_three() -> None:
    """A stalled run (no quorum) names no author, judge or vendor in any rendering."""
    text, data, md = three_ways(load("stalled.json"))
    assert data["authors_revealed"] is False
    assert report.HIDDEN in text
    assert "stay hidden until the tally" in md
    dumped = json.dumps(data)
    for name in (*AUTHORS, *JUDGES, "gemini", "Claude"):
        for rendering in (text, dumped, md):
            assert not re.search(rf"\b{re.escape(name)}\b", rendering, re.I), name
    assert data["winner"] is None
    assert "winner   none" in text
    assert "**Winner:** none" in md
    assert "A 1, B 0" in text
    assert "A 1, B 0" in md


@pytest.mark.parametrize("name", ["run.json", "stalled.json"])
def test_warnings_agree(name: str) -> None:
    """Every warning the JSON lists is in the text report and in the markdown."""
    text, data, md = three_ways(load(name))
    warnings = data["warnings"]
    assert isinstance(warnings, list)
    for w in warnings:
        assert w in " ".join(text.split())
        assert w in md


def test_markdown_is_three_marked_comments() -> None:
    """The tally, the transcripts and the summary, each with a marker a poster can find."""
    run = load("run.json")
    names = [c.name for c in comments(report.build(run))]
    assert names == ["tally", "transcripts", "review"]
    md = report.render_markdown(run)
    for name in names:
        assert f"<!-- magi:{name} {run.id} -->" in md
    assert md.count("<details>") == md.count("</details>")


def test_transcripts_hold_each_judges_ranking_turns_and_vote() -> None:
    """A collapsed section per judge seat with its rationale, its argument and its vote."""
    md = comments(report.build(load("run.json")))[1].body
    sections = md.split("<details>")[1:]
    assert [s.split("</summary>")[0].split(">")[1].split(":")[0] for s in sections] == [
        "judge-1 (judge-agent-x)",
        "judge-2",
        "judge-3",
    ]
    assert "> A is simpler" in sections[0]
    assert "> simplest correct" in sections[0]
    assert "**Deliberation, round 1** (ok): A > B" in sections[1]
    assert "**Private vote** (timeout)" in sections[2]


def test_unblinding_only_once_revealed() -> None:
    """The tally comment maps labels to agents once revealed, and says why not before."""
    shown = comments(report.build(load("run.json")))[0].body
    assert "| A | opus-agent |" in shown
    hidden = comments(report.build(load("stalled.json")))[0].body
    assert "| A | " not in hidden.split("### Unblinding")[1]


def test_review_seam_renders_given_sections() -> None:
    """The review loop's sections replace the placeholder; collapsed ones are <details>."""
    view = report.build(load("run.json"))
    body = report.render_sections(
        [
            report.Section("Findings, round 1", report.Safe("- F1 major")),
            report.Section("e2e", report.Safe("passed"), collapsed=True),
        ]
    )
    assert "### Findings, round 1\n\n- F1 major" in body
    assert "<details>\n<summary>e2e</summary>\n\npassed" in body
    placeholder = comments(view)[2].body
    assert "review loop has not run yet" in placeholder
    filled = comments(view, [report.Section("Findings", report.Safe("none"))])[2].body
    assert "review loop has not run yet" not in filled
    assert "### Findings\n\nnone" in filled


def test_each_seats_cli_version_is_named_once_revealed_and_never_before() -> None:
    """After the tally the report, its JSON and the tally comment name the CLI and version
    each author and judge ran (an election between versions is auditable); a stalled run
    names none, not even a version number."""
    from magi.model.config import AgentConfig

    def versioned(run: Run) -> Run:
        held = sorted({s.agent for s in run.seats.values()})
        agents = [AgentConfig(id=a, kind="codex", command=["x"]) for a in held]
        for seat in run.seats.values():
            seat.cli_version = "9.8.7"
        return run.model_copy(update={"config": run.config.model_copy(update={"agents": agents})})

    run = versioned(load("run.json"))
    text, data, md = three_ways(run)
    author = run.agent_of("impl-A")
    assert author is not None
    shown = "codex 9.8.7"
    assert f"| A | {author} | {shown} |" in md
    assert f"{author} ({shown})" in text
    assert data["candidates"][0]["cli"] == shown  # type: ignore[index]
    assert all(j["cli"] for j in data["judges"])  # type: ignore[attr-defined]
    text, data, md = three_ways(versioned(load("stalled.json")))
    for rendering in (text, json.dumps(data), md):
        assert "9.8.7" not in rendering
