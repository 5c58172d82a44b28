"""The result matrix: headline, one row per seat, no-answer rows, minority always, limits, JSON."""

from __future__ import annotations

import json

from council_helpers import config, record, run, shown
from magi.council.matrix import build, to_json
from magi.council.render import COMMENT_LIMIT, markdown, terminal
from magi.demo.council_scripted import ScriptedAsker

SPLIT = {"sage-1": "says:TOML", "sage-2": "switch:YAML:TOML", "sage-3": "says:JSON"}
JSON_KEYS = {
    "id",
    "kind",
    "mode",
    "status",
    "verdict",
    "position",
    "seats",
    "minority",
    "rounds",
    "redactions",
}
SEAT_KEYS = {
    "seat",
    "agent",
    "weight",
    "personality",
    "status",
    "position",
    "confidence",
    "changed",
}


def test_json_has_every_key_the_issue_lists():
    """--json carries at least the keys the issue lists, per seat too."""
    rec, _ = run(SPLIT)
    out = to_json(rec, "/x/run.json")
    assert set(out) >= JSON_KEYS
    assert out["kind"] == "council"
    assert out["verdict"] == "passed"
    assert out["position"] == "TOML"
    assert out["rounds"] == 1
    assert all(set(s) >= SEAT_KEYS for s in out["seats"])
    assert [s["agent"] for s in out["seats"]] == ["opus", "codex", "gemini"]
    assert out["seats"][1]["changed"] == "switch: YAML → TOML"


def test_minority_is_always_there():
    """The losing seat is named with its position; a unanimous council says there is none."""
    rec, _ = run(SPLIT)
    assert build(rec).minority[0].startswith("sage-3: JSON")
    rec, _ = run({"sage-1": "says:A", "sage-2": "says:A", "sage-3": "says:A"})
    (line,) = build(rec).minority
    assert line.startswith("none")
    assert "Minority opinion" in markdown(rec)


def test_a_seat_that_could_not_answer_keeps_its_row():
    """A failed seat reads no answer (error); an invalid one no answer (invalid)."""
    rec, _ = run({"sage-1": "says:A", "sage-2": "fail", "sage-3": "garbage", "sage-4": "says:A"})
    rows = {r.seat: r for r in build(rec).rows}
    assert len(rows) == 4
    assert rows["sage-2"].status == "no answer (error)"
    assert rows["sage-3"].status == "no answer (invalid)"
    md = shown(markdown(rec))
    assert "no answer (error)" in md
    assert "no answer (invalid)" in md


def test_debate_column_says_not_held_when_none_ran():
    """A council that passed in round 1 shows `not held`, not an empty column."""
    rec, _ = run({"sage-1": "says:A", "sage-2": "says:A", "sage-3": "says:B"})
    assert {r.changed for r in build(rec).rows} == {"not held"}


def test_agents_stay_hidden_until_the_verdict():
    """A record without a verdict shows no agent."""
    rec, _ = record(config(3))
    assert {r.agent for r in build(rec).rows} == {None}


def test_no_consensus_carries_the_disagreement_breakdown():
    """Each final position is listed with its holders."""
    rec, _ = run({"sage-1": "says:A", "sage-2": "says:B", "sage-3": "says:C"})
    m = build(rec)
    assert rec.verdict == "no_consensus"
    assert [b.split(":")[0] for b in m.breakdown] == ["A", "B", "C"]
    assert "Disagreement" in markdown(rec)


def test_markdown_fits_a_comment_however_long_the_answers():
    """Huge rationales and many changes are cut to stay under 65,536 characters."""
    rec, bodies = record(config(9, rounds=0))
    personas = {f"sage-{i}": f"says:P{i}" for i in range(1, 10)}
    asker = ScriptedAsker(personas)
    long = "x " * 20_000
    for i in range(1, 10):
        answer = {
            "position": f"P{i}",
            "rationale": long,
            "confidence": 0.5,
            "suggestions": [f"{long[:3000]}{j}" for j in range(60)],
        }
        asker.overrides[(f"sage-{i}", "ask")] = f"```json\n{json.dumps(answer)}\n```"
    from magi.council.modes import run_council
    from magi.council.rounds import Council

    run_council(Council(rec, asker, evidence=bodies))
    assert len(rec.changes) == 540
    md = markdown(rec, "/x/run.json")
    assert len(md) < COMMENT_LIMIT
    assert "cut to fit a comment" in md


def test_the_audit_line_names_the_record():
    """The matrix ends with where the record (prompts, raw answers) is."""
    rec, _ = run(SPLIT)
    assert "/data/runs/r/run.json" in shown(markdown(rec, "/data/runs/r/run.json"))


def test_terminal_rendering_holds_every_row():
    """The rich rendering has the headline and every seat."""
    from rich.console import Console

    rec, _ = run(SPLIT)
    console = Console(width=200, record=True)
    console.print(terminal(rec, "/x/run.json"))
    text = console.export_text()
    assert "passed — TOML" in text
    assert all(f"sage-{i}" in text for i in (1, 2, 3))


def test_japanese_matrix_labels():
    """A Japanese council renders its matrix in Japanese."""
    rec, _ = run(
        {"sage-1": "says:A", "sage-2": "says:A", "sage-3": "says:B"}, question="どちらがよいですか"
    )
    md = markdown(rec)
    assert "可決" in md
    assert "少数意見" in md


def test_research_matrix_lists_every_finding_with_its_outcome():
    """A research council's matrix names each cluster, adopted or not, and each seat's count."""
    rec, _ = run(
        {"sage-1": "researcher:a|b", "sage-2": "researcher:a", "sage-3": "researcher:c"},
        mode="research",
    )
    m = build(rec)
    assert [r.position for r in m.rows] == ["2 finding(s)", "1 finding(s)", "1 finding(s)"]
    assert any(n.startswith("C1 adopted (2 supporter(s)): a") for n in m.notes)
    assert len([n for n in m.notes if n.startswith("C")]) == 3
    assert "passed" in markdown(rec)


def test_review_matrix_shows_votes_dissent_and_action_items():
    """A review's rows are votes; the dissent is the minority; major findings are actions."""
    rec, _ = run({"sage-1": "approve", "sage-2": "approve", "sage-3": "reject"}, mode="review")
    m = build(rec)
    assert [r.position for r in m.rows] == ["APPROVE", "APPROVE", "REJECT"]
    assert m.minority[0].startswith("sage-3: REJECT")
    assert m.actions == ["[major] No test (sage-3)"]
    assert to_json(rec)["position"] == "approve"


def test_a_review_row_shows_the_votes_reason():
    """The rationale cell of a review row is the reason the seat gave for its vote."""
    rec, _ = run(
        {"sage-1": "approve", "sage-2": "approve", "sage-3": "plain:REJECT"}, mode="review"
    )
    reasons = [r.rationale for r in build(rec).rows]
    assert reasons[0] == "The change does what it says."
    assert reasons[2] == "reject, as the analysis says"
    assert "reject, as the analysis says" in shown(markdown(rec))


def test_a_conditional_review_shows_its_conditions_as_action_items():
    """CONDITIONAL is the row's vote, the headline says so, each condition is an action item."""
    personas = {"sage-1": "approve", "sage-2": "conditional:add a test", "sage-3": "approve"}
    rec, _ = run(personas, mode="review")
    m = build(rec)
    assert m.rows[1].position == "CONDITIONAL"
    assert m.headline.startswith("approved with conditions")
    assert "[condition] add a test (sage-2)" in m.actions
    seen = shown(markdown(rec))
    assert "not passing until they are met" in seen
    assert "add a test (sage-2)" in seen
    ja, _ = run(personas, mode="review", question="これをマージしますか")
    assert "条件付き承認" in markdown(ja)
