"""The smaller council findings, each as it was found: what the matrix says and when."""

from __future__ import annotations

import json

import council_helpers as ch
from magi.core.council.prompts import debate_prompt, position_prompt, research_prompt
from magi.council.matrix import build
from magi.council.modes import run_council
from magi.council.render import markdown
from magi.council.rounds import Council
from magi.demo.council_scripted import ScriptedAsker


def _fence(obj: object) -> str:
    return "```json\n" + json.dumps(obj) + "\n```\n"


def test_on_no_consensus_nobody_lost_the_vote() -> None:
    """Nothing passed, so no seat is said to have lost; the breakdown holds the positions."""
    rec, _ = ch.run({"sage-1": "says:A", "sage-2": "says:B", "sage-3": "says:C"})
    assert rec.verdict == "no_consensus"
    m = build(rec)
    assert not any("lost the vote" in line for line in m.minority)
    assert m.minority[0].startswith("none: no position passed")
    assert len(m.breakdown) == 3


def test_a_failed_clerk_is_said_in_the_matrix() -> None:
    """A clerk that answered nothing usable: every position stood alone, and the notes say so."""
    rec, bodies = ch.record(ch.config(3))
    asker = ScriptedAsker({"sage-1": "says:A", "sage-2": "says:A", "sage-3": "says:B"})
    asker.overrides[("clerk", "clerk-positions")] = None
    run_council(Council(rec, asker, evidence=bodies))
    notes = build(rec).notes
    assert any("the clerk gave no usable grouping" in n for n in notes)
    assert "the clerk gave no usable grouping" in ch.shown(markdown(rec))


def test_a_conditional_finding_shows_its_conditions_and_a_split_both_sides() -> None:
    """ "adopted on the conditions noted" comes with the conditions; a split with both sides."""
    cfg = ch.config(3)
    rec, bodies = ch.record(cfg, "What limits does the API have?", mode="research")
    asker = ScriptedAsker(
        {
            "sage-1": "researcher:rate limit is 5000 per hour",
            "sage-2": "researcher:pagination caps at 100",
            "sage-3": "researcher:pagination caps at 100",
        }
    )
    asker.overrides[("sage-2", "deliberate")] = _fence(
        {"verdict": "conditional", "reason": "only for authenticated requests"}
    )
    asker.overrides[("sage-3", "deliberate")] = _fence(
        {"verdict": "reject", "reason": "the docs say 1000 for Apps"}
    )
    run_council(Council(rec, asker, evidence=bodies))
    notes = "\n".join(build(rec).notes)
    assert "only for authenticated requests" in notes
    assert "the docs say 1000 for Apps" in notes


def test_round_one_says_nothing_of_other_participants() -> None:
    """Seed 001: a sage answering alone is not told that others exist; debate is."""
    for lang, word in (("en", "participant"), ("ja", "参加者")):
        for prompt in (
            position_prompt("Q?", [], None, lang),
            research_prompt("Q?", [], None, lang),
        ):
            assert word not in prompt, (lang, prompt)
        debate = debate_prompt(
            "Q?",
            round_no=1,
            own=("A", "why"),
            others=[("Sage A", "B", "because")],
            changes=[],
            personality=None,
            lang=lang,
        )
        assert word in debate


def test_a_council_reduced_to_two_in_debate_one_gets_no_second_round() -> None:
    """Two seats get one debate round: a seat lost in debate 1 ends the debating there."""
    rec, bodies = ch.record(ch.config(3, rounds=2))
    asker = ScriptedAsker({"sage-1": "says:A", "sage-2": "says:B", "sage-3": "says:C"})
    asker.overrides[("sage-3", "debate")] = None
    run_council(Council(rec, asker, evidence=bodies))
    assert rec.debate_rounds == 1
    assert not [p for seat, node, p in asker.prompts if node == "debate" and "round 2" in p]


def test_magi_council_research_on_github_runs_a_research_council(tmp_path) -> None:
    """`/magi council --research ...`: research mode, the flag not part of the question."""
    from magi.core.council.surface import mode_of, question_of

    body = "/magi council --research What limits does the API have?"
    assert mode_of(body) == "research"
    assert question_of(body) == "What limits does the API have?"
    assert mode_of("/magi council --research\nWhat limits?") == "research"
    assert question_of("/magi council --research\nWhat limits?") == "What limits?"
    assert question_of("/magi council --research") == ""  # the App refuses an empty one
    assert mode_of("/magi council Is --research a flag?") == "decision"
    personas = {f"sage-{i}": "researcher:5000 requests per hour" for i in (1, 2, 3)}
    inputs, _, rec = ch.on_github(tmp_path, body, ScriptedAsker(personas))
    assert inputs.mode == "research"
    assert rec.mode == "research"
    assert rec.research
    assert rec.research[0].outcome == "adopted"


def test_a_japanese_matrix_gives_magis_reasons_in_japanese() -> None:
    """A Japanese question: the headline's reason and magi's notes are Japanese too."""
    cfg = ch.config(2)
    rec, bodies = ch.record(cfg, "設定ファイルの形式はどれにしますか？")
    asker = ScriptedAsker({"sage-1": "says:TOML", "sage-2": "says:YAML"})
    run_council(Council(rec, asker, evidence=bodies))
    assert rec.language == "ja"
    assert rec.verdict == "no_consensus"
    m = build(rec)
    assert "debate round" not in m.headline
    assert "討論1ラウンドの後" in m.headline
    assert all("two-seat council" not in n for n in m.notes)
    assert "二席の合議" in "".join(m.notes)
    assert "after 1 debate round(s)" in rec.reason  # the record keeps the stable English


def test_tokens_and_cost_per_seat_and_for_the_council() -> None:
    """Seed 002: the matrix and --json say what each seat and the whole council spent,
    reported dollars apart from estimates, and "not reported" where a CLI said nothing."""
    from datetime import UTC, datetime

    from magi.council.matrix import to_json
    from magi.model.run import Turn, Usage

    rec, _ = ch.run({"sage-1": "says:A", "sage-2": "says:A", "sage-3": "says:B"})
    at = datetime(2026, 12, 1, tzinfo=UTC)

    def turn(seat: str, usage: Usage) -> Turn:
        return Turn(
            seat=seat,
            node="ask",
            turn=1,
            agent="x",
            status="ok",
            started_at=at,
            duration_s=2.0,
            usage=usage,
        )

    rec.turns = [
        turn("sage-1", Usage(input_tokens=1200, output_tokens=300, cost_usd=0.05)),
        turn("sage-2", Usage(input_tokens=1000, output_tokens=100)),
        turn("sage-3", Usage()),
        turn("clerk", Usage(input_tokens=10, output_tokens=5, cost_usd=0.01)),
    ]
    m = build(rec)
    assert m.usage[0] == "sage-1: 1 turn(s), 1,200 in / 300 out tokens, $0.0500"
    assert m.usage[2] == "sage-3: 1 turn(s), tokens not reported, cost not reported"
    assert m.usage[3].startswith("clerk:")
    assert m.usage[-1].startswith("the council: 4 turn(s), 2,210 in / 405 out tokens, ")
    out = to_json(rec)
    total = out["usage"][-1]
    assert total["seat"] == "total"
    assert total["input_tokens"] == 2210
    assert total["cost_usd"] >= 0.06
    assert "Usage" in ch.shown(markdown(rec))


def test_a_research_council_on_a_pull_request_sets_no_check(tmp_path) -> None:
    """Research reports findings; it must not pass a required `magi council` check."""
    from github_helpers import REPO
    from magi.testing.github import FakeGitHub

    personas = {f"sage-{i}": "researcher:it touches the cache" for i in (1, 2, 3)}
    body = "/magi council --research What does this change touch?"
    inputs, out, _ = ch.on_github(tmp_path, body, ScriptedAsker(personas), head="c" * 40)
    fake = FakeGitHub()
    fake.add_pull(REPO, 1, "x", "c" * 40)
    done = ch.publish_on(fake, inputs, out)
    assert done.conclusion is None
    assert fake.named("create_check_run") == []
    assert len(fake.comments_on(REPO, 1)) == 1


def test_a_japanese_review_gives_its_rule_in_japanese() -> None:
    """The review's reason (figures, tier, rule) reads in Japanese; a seat's words do not
    get translated even when they match one of magi's phrases."""
    from magi.core.council.phrases import localize

    rec, _ = ch.run(
        {"sage-1": "approve", "sage-2": "approve", "sage-3": "approve"},
        question="このプルリクエストをマージしてよいですか？",
        mode="review",
        risk="high",
    )
    assert rec.language == "ja"
    headline = build(rec).headline
    assert "unanimity" not in headline
    assert "全会一致" in headline
    assert localize("ja", "C1 adopted (2 supporter(s))") == "C1 採用（支持2席）"


def test_a_japanese_research_matrix_never_translates_a_seats_claim() -> None:
    """A claim reading like magi's words ("use X — rejected") stays the seat's words."""
    cfg = ch.config(3)
    rec, bodies = ch.record(cfg, "このAPIの制限は何ですか？", mode="research")
    claim = "use X — rejected; unanimity"
    personas = {f"sage-{i}": f"researcher:{claim}" for i in (1, 2, 3)}
    run_council(Council(rec, ScriptedAsker(personas), evidence=bodies))
    assert rec.language == "ja"
    (note,) = [n for n in build(rec).notes if n.startswith("C1")]
    assert note == f"C1 採用（支持3席）: {claim}"
