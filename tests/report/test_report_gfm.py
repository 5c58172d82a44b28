"""Markdown that agent text cannot break, and comments that fit GitHub's size limit."""

from __future__ import annotations

from pathlib import Path

from magi import report
from magi.model.run import Run
from magi.report import gfm
from magi.report.markdown import comments

FIXTURE = Path(__file__).parents[1] / "fixtures" / "report" / "run.json"
HOSTILE = (
    "@octocat look at this\n"
    "```python\n"
    "</details><script>alert(1)</script>\n"
    "# Heading\n"
    "> quoted\n"
    "![pixel](https://tracker.example/p.gif) cc @org/team and a@b.example"
)


def _run() -> Run:
    return Run.model_validate_json(FIXTURE.read_text(encoding="utf-8"))


def test_mentions_never_ping() -> None:
    """An @name in agent text gets a zero-width space; an e-mail address is left alone."""
    out = gfm.inline("thanks @octocat and @org/team, mail a@b.example")
    assert "@octocat" not in out
    assert "@&#8203;octocat" in out
    assert "@&#8203;org/team" in out
    assert "a@b.example" in out


def test_quote_keeps_agent_text_inside() -> None:
    """Fences, HTML, headings and images in a rationale stay literal, inside one quote."""
    out = gfm.quote(HOSTILE)
    lines = out.splitlines()
    assert all(line.startswith(">") for line in lines)
    assert "<" not in out
    assert not any(line.lstrip("> ").startswith("```") for line in lines)
    assert "> \\#" in out
    assert "> \\&gt;" not in out  # ">" is escaped with a backslash, not twice
    assert "> \\> quoted" in out
    assert "!\\[pixel]" in out
    assert "@octocat" not in out


def test_hostile_rationale_cannot_break_the_transcripts() -> None:
    """A judge's hostile text leaves every <details> balanced and nothing raw behind."""
    run = _run()
    run.votes[0].rationale = HOSTILE
    run.judgements[0].text = HOSTILE
    md = comments(report.build(run))[1].body
    assert md.count("<details>") == md.count("</details>") == 3
    assert "<script>" not in md
    assert "@octocat" not in md
    assert not any(line.startswith("```") for line in md.splitlines())


def test_table_cells_cannot_split() -> None:
    """A pipe or newline in agent text does not add a column or end the row."""
    assert gfm.inline("a | b\nc") == "a \\| b c"


def test_forgotten_filter_still_escapes() -> None:
    """A template value printed without a filter is escaped all the same."""
    run = _run()
    run.reason = "<details> @octocat"
    md = comments(report.build(run))[0].body
    assert "**Status:** ready: &lt;details> @&#8203;octocat" in md


def test_fit_leaves_short_text_alone() -> None:
    """A comment under the limit is returned as it is."""
    assert gfm.fit("short\n", "the record") == "short\n"


def test_fit_cuts_at_a_line_and_says_where_the_rest_is() -> None:
    """A long comment is cut at a line boundary, under the limit, with a pointer."""
    lines = [f"line {n} " + "x" * 50 + "\n" for n in range(3000)]
    body = "".join(lines)
    out = gfm.fit(body, "runs/r1/run.json")
    assert len(out) <= gfm.LIMIT
    kept, notice = out.split("\n\n**Cut here:**")
    assert body.startswith(kept)
    assert kept.endswith("\n")
    assert "runs/r1/run.json" in notice
    left = int(notice.split()[0])
    assert left == 3000 - kept.count("\n")


def test_fit_closes_open_details() -> None:
    """A cut inside a <details> closes it, so the rest of the page is not swallowed."""
    body = "<details>\n<summary>judge-1</summary>\n\n" + "> word\n" * 20_000 + "</details>\n"
    out = gfm.fit(body, "the record")
    assert len(out) <= gfm.LIMIT
    assert out.count("<details>") == out.count("</details>") == 1
    assert out.index("</details>") < out.index("**Cut here:**")


def test_one_huge_line_is_still_cut() -> None:
    """A single line longer than the limit is split rather than kept whole."""
    out = gfm.fit("y" * 200_000, "the record")
    assert len(out) <= gfm.LIMIT
    assert "**Cut here:**" in out


def test_every_comment_of_a_huge_run_fits() -> None:
    """Judges who wrote novels still leave each of the three comments under the limit."""
    run = _run()
    novel = "\n".join(f"paragraph {n}: " + "words " * 30 for n in range(2000))
    for r in run.judgements:
        r.text = novel
    run.votes[0].rationale = novel
    run.deliberation[0].text = novel
    for c in comments(report.build(run)):
        assert len(c.body) <= gfm.LIMIT, c.name
        assert c.body.count("<details>") == c.body.count("</details>"), c.name
    cut = comments(report.build(run))[1].body
    assert f"runs/{run.id}/run.json" in cut
