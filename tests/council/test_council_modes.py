"""Research and review councils, degraded councils, redaction and evidence, end to end."""

from __future__ import annotations

import hashlib

from council_helpers import config, record, run
from magi.council.modes import run_council
from magi.council.rounds import Council
from magi.demo.council_scripted import ScriptedAsker


def test_research_adopts_shared_findings_and_deliberates_solo_ones():
    """A fact two seats report is adopted; a solo one is judged by the others only."""
    rec, asker = run(
        {
            "sage-1": "researcher:3.11 is in security mode|PEP 703 landed",
            "sage-2": "researcher:3.11 is in security mode",
            "sage-3": "researcher:Python 4 is planned",
        },
        mode="research",
    )
    assert rec.verdict == "passed"
    by_claim = {r.claims[0]["claim"]: r for r in rec.research}
    shared = by_claim["3.11 is in security mode"]
    assert shared.outcome == "adopted"
    assert shared.supporters == ["sage-1", "sage-2"]
    solo = by_claim["Python 4 is planned"]
    assert solo.outcome == "adopted"
    assert set(solo.verdicts) == {"sage-1", "sage-2"}  # never its author
    deliberating = {s for s, n, _ in asker.prompts if n == "deliberate"}
    assert deliberating == {"sage-1", "sage-2", "sage-3"}
    own = next(p for s, n, p in asker.prompts if s == "sage-3" and n == "deliberate")
    assert "Python 4 is planned" not in own


def test_research_rejected_findings_stay_in_the_report():
    """A solo finding both others reject is kept, marked rejected."""
    rec, bodies = record(config(3), mode="research")
    asker = ScriptedAsker(
        {"sage-1": "researcher:a", "sage-2": "researcher:a", "sage-3": "researcher:b"}
    )
    reject = '```json\n{"verdict": "reject", "reason": "no source says so"}\n```'
    asker.overrides[("sage-1", "deliberate")] = reject
    asker.overrides[("sage-2", "deliberate")] = reject
    run_council(Council(rec, asker, evidence=bodies))
    outcomes = {r.claims[0]["claim"]: r.outcome for r in rec.research}
    assert outcomes == {"a": "adopted", "b": "rejected"}


def test_review_passes_two_to_one_at_medium_and_records_dissent():
    """Medium risk: 2:1 passes; the rejecting seat is the recorded dissent."""
    rec, _ = run(
        {"sage-1": "approve", "sage-2": "approve", "sage-3": "reject"}, mode="review", risk="medium"
    )
    assert rec.verdict == "passed"
    assert rec.review is not None
    assert rec.review.dissent == ["sage-3"]


def test_review_veto_only_from_the_configured_seat():
    """The veto holder's critical veto rejects; the same claim from another seat is ignored."""
    cfg = config(3, veto="gemini")  # sage-3
    rec, _ = run({"sage-1": "approve", "sage-2": "approve", "sage-3": "veto"}, cfg, mode="review")
    assert rec.verdict == "rejected"
    assert rec.review is not None
    assert rec.review.vetoed_by == ["sage-3"]
    rec, _ = run(
        {"sage-1": "veto", "sage-2": "approve", "sage-3": "approve"}, cfg, mode="review", risk="low"
    )
    assert rec.verdict == "passed"
    assert rec.review is not None
    assert rec.review.ignored_vetoes


def test_review_with_abstentions_is_inconclusive():
    """One approval and two abstentions: no quorum."""
    rec, _ = run({"sage-1": "approve", "sage-2": "abstain", "sage-3": "abstain"}, mode="review")
    assert rec.verdict == "inconclusive"


def test_two_available_seats_make_a_two_seat_council_with_a_note():
    """A missing CLI leaves two seats: the council sits, and the matrix says so."""
    cfg = config(3)
    rec, bodies = record(cfg, missing={"gemini": "`gemini` is not on PATH"})
    assert rec.verdict is None
    assert [s.seated for s in rec.panel_seats] == [True, True, False]
    assert any("two-seat" in n for n in rec.notes)
    asker = ScriptedAsker({"sage-1": "says:A", "sage-2": "says:A"})
    run_council(Council(rec, asker, evidence=bodies))
    assert rec.verdict == "passed"
    assert not [p for p in asker.prompts if p[0] == "sage-3"]


def test_one_available_seat_is_no_council_with_the_reason():
    """Two CLIs missing of three: no council, naming what is missing."""
    rec, _ = record(config(3), missing={"codex": "`codex` missing", "gemini": "`gemini` missing"})
    assert rec.verdict == "no_council"
    assert "codex" in (rec.reason or "")
    assert "gemini" in (rec.reason or "")


def test_a_roster_of_one_is_no_council():
    """With no [council] and one agent, there is no council: too few seats."""
    from magi.model.config import Config

    cfg = Config.model_validate({"agents": [{"id": "solo", "kind": "command", "command": ["x"]}]})
    rec, _ = record(cfg)
    assert rec.verdict == "no_council"
    assert "at least two" in (rec.reason or "")


def test_no_council_table_seats_the_roster_with_equal_weights():
    """Without [council], every roster agent sits with weight 1 and no personality."""
    from magi.model.config import Config

    ids = ["a", "b", "c"]
    cfg = Config.model_validate(
        {"agents": [{"id": i, "kind": "command", "command": ["x"]} for i in ids]}
    )
    rec, _ = record(cfg)
    assert [(s.agent, s.weight, s.personality) for s in rec.panel_seats] == [
        ("a", 1, None),
        ("b", 1, None),
        ("c", 1, None),
    ]


def test_secrets_and_personal_data_are_redacted_before_any_prompt():
    """Keys, passwords, emails, IPs and connection strings never reach a seat."""
    question = (
        "Should we rotate sk-proj-abc123def456ghi789jkl? Ask ops@example.com; the db is "
        "postgres://app:hunter2@10.1.2.3/prod and password = 'hunter2'. Host 192.168.4.7."
    )
    rec, asker = run(
        {"sage-1": "says:A", "sage-2": "says:A", "sage-3": "says:B"}, question=question
    )
    kinds = {r.kind for r in rec.redactions}
    assert {"api_key", "email", "connection_string", "password", "ip_address"} <= kinds
    for _seat, _node, prompt in asker.prompts:
        for secret in ("sk-proj", "ops@example.com", "hunter2", "10.1.2.3", "192.168.4.7"):
            assert secret not in prompt
    # The record keeps what was asked, less the values it redacted (the finding:
    # run.json kept the question whole).
    stored = rec.model_dump_json()
    for secret in ("sk-proj", "ops@example.com", "hunter2", "10.1.2.3", "192.168.4.7"):
        assert secret not in stored
    assert rec.question.original.startswith("Should we rotate [REDACTED:api_key]?")


def test_evidence_reaches_every_seat_byte_for_byte_with_its_hash():
    """Every seat's prompt carries the same evidence text; its SHA-256 is recorded."""
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-print(1)\n+print(2)\n"
    rec, asker = run(
        {"sage-1": "approve", "sage-2": "approve", "sage-3": "approve"},
        mode="review",
        evidence=[("diff", "pr.diff", diff)],
    )
    (ev,) = rec.evidence
    assert ev.sha256 == hashlib.sha256(diff.encode()).hexdigest()
    prompts = [p for _s, n, p in asker.prompts if n == "review"]
    assert len(prompts) == 3
    assert all(diff.rstrip("\n") in p for p in prompts)


def test_japanese_questions_get_japanese_prompts():
    """The prompt language follows the question."""
    rec, asker = run(
        {"sage-1": "says:TOML", "sage-2": "says:TOML", "sage-3": "says:JSON"},
        question="設定ファイルは TOML と YAML のどちらがよいですか？",
    )
    assert rec.language == "ja"
    assert "# 問い" in asker.prompts[0][2]


def test_language_can_be_overridden_in_config():
    """[council] language = "en" keeps English prompts for a Japanese question."""
    cfg = config(3, extra={"language": "en"})
    rec, asker = run(
        {"sage-1": "says:A", "sage-2": "says:A", "sage-3": "says:B"}, cfg, question="どちらですか"
    )
    assert rec.language == "en"
    assert "# The question" in asker.prompts[0][2]


def test_debate_prompts_carry_the_same_evidence():
    """A debate round hands every debater the evidence again, unchanged."""
    doc = "Design note: the parser must accept comments.\n"
    _, asker = run(
        {"sage-1": "says:A", "sage-2": "switch:B:A", "sage-3": "says:C"},
        evidence=[("note", "note.md", doc)],
    )
    debate = [p for _s, n, p in asker.prompts if n == "debate"]
    assert len(debate) == 3
    assert all(doc.rstrip("\n") in p for p in debate)


def test_a_conflicting_detail_stays_one_cluster_with_a_noted_conflict():
    """Findings of one fact that differ on a date: one adopted cluster, the conflict noted."""
    rec, bodies = record(config(3), mode="research")
    asker = ScriptedAsker(
        {
            "sage-1": "researcher:3.11 ends in 2027",
            "sage-2": "researcher:3.11 ends in October 2027",
            "sage-3": "researcher:other",
        }
    )
    asker.overrides[("clerk", "clerk-findings")] = (
        '```json\n{"groups": [["F1", "F2"], ["F3"]], "conflicts": {"F2": "the month"}}\n```'
    )
    run_council(Council(rec, asker, evidence=bodies))
    first = rec.research[0]
    assert first.outcome == "adopted"
    assert first.conflict == "the month"
    from magi.council.matrix import build

    assert any("(conflict: the month)" in n for n in build(rec).notes)


def test_a_japanese_council_gets_the_japanese_personality():
    """A shipped personality is handed in the council's language; the record keeps that text."""
    cfg = config(3, personalities={0: "security"})
    rec, asker = run(
        {"sage-1": "says:A", "sage-2": "says:A", "sage-3": "says:B"}, cfg, question="どちらですか"
    )
    assert "セキュリティ" in (rec.panel_seats[0].personality_text or "")
    first = next(p for s, n, p in asker.prompts if s == "sage-1" and n == "ask")
    assert "セキュリティ技術者" in first


def test_a_high_risk_review_needs_three_readable_votes():
    """Two approvals and an unreadable third: no quorum at high risk (seed 004's 3:0)."""
    rec, _ = run(
        {"sage-1": "approve", "sage-2": "approve", "sage-3": "garbage"}, mode="review", risk="high"
    )
    assert rec.verdict == "inconclusive"
    assert rec.review is not None
    assert rec.review.quorum == 3
    assert "high risk needs 3" in rec.reason


def test_the_review_quorum_comes_from_the_config():
    """[council] review_quorum.high = 2 lets a 2:0 with an abstention pass high, on purpose."""
    cfg = config(3, extra={"review_quorum": {"high": 2}})
    rec, _ = run(
        {"sage-1": "approve", "sage-2": "approve", "sage-3": "abstain"},
        cfg,
        mode="review",
        risk="high",
    )
    assert rec.verdict == "passed"


def test_a_seed_format_rejection_counts_as_a_rejection():
    """`**VOTE:** REJECT` in seed 004's plain block rejects a high-risk review."""
    rec, _ = run(
        {"sage-1": "approve", "sage-2": "approve", "sage-3": "plain:REJECT"},
        mode="review",
        risk="high",
    )
    assert rec.verdict == "rejected"
    assert rec.review is not None
    assert rec.review.counted == ["sage-1", "sage-2", "sage-3"]


def test_a_conditional_vote_makes_the_review_conditional_with_its_conditions():
    """CONDITIONAL: the verdict is conditional and the record lists seat: condition."""
    rec, _ = run(
        {"sage-1": "approve", "sage-2": "approve", "sage-3": "conditional:add a test|log less"},
        mode="review",
    )
    assert rec.verdict == "conditional"
    assert rec.review is not None
    assert rec.review.conditions == ["sage-3: add a test", "sage-3: log less"]


def test_the_review_prompt_asks_for_reason_and_conditions_in_both_languages():
    """Every review prompt names the four votes and the reason and conditions fields."""
    for question, words in (("Merge this?", "CONDITIONAL"), ("これをマージしますか", "条件")):
        _, asker = run(
            {"sage-1": "approve", "sage-2": "approve", "sage-3": "approve"},
            mode="review",
            question=question,
        )
        prompts = [p for _s, n, p in asker.prompts if n == "review"]
        assert all(words in p and "`reason`" in p and "`conditions`" in p for p in prompts)
        assert all('"reason"' in p for p in prompts)  # the json example shows it
