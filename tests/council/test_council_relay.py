"""What a council relays is bounded and clean: answers, prompts, the question, the record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import council_helpers as ch
from magi.council.modes import run_council
from magi.council.rounds import Council
from magi.demo.council_scripted import ScriptedAsker
from magi.errors import UsageError
from magi.testing.cli import invoke

SEATS = ("sage-1", "sage-2", "sage-3")


def _answer(position: str, rationale: str) -> str:
    data = {"position": position, "rationale": rationale, "confidence": 0.6}
    return "```json\n" + json.dumps(data) + "\n```\n"


def _split_with(sage3: str, question: str = "Which config format: TOML, YAML or JSON?"):
    """sage-1 TOML, sage-2 YAML, sage-3 says ``sage3``: nothing passes, so a debate runs
    and every seat's prompt carries the others' answers."""
    rec, bodies = ch.record(ch.config(3), question)
    asker = ScriptedAsker({"sage-1": "says:TOML", "sage-2": "says:YAML", "sage-3": "says:JSON"})
    asker.overrides[("sage-3", "ask")] = _answer("JSON", sage3)
    run_council(Council(rec, asker, evidence=bodies))
    return rec, asker


def _others_prompts(asker: ScriptedAsker) -> str:
    """Every prompt sage-3's words reach: the clerk's, and the other seats' debate ones."""
    return "\n".join(p for seat, node, p in asker.prompts if seat != "sage-3")


def test_a_two_megabyte_answer_is_capped_wherever_it_is_relayed() -> None:
    """The clerk and the other seats get the cap, marked; the record keeps the cap too."""
    rec, asker = _split_with("x" * 2_000_000)
    relayed = _others_prompts(asker)
    assert "x" * 9000 not in relayed
    assert "characters cut by magi" in relayed
    assert len(rec.model_dump_json()) < 200_000
    assert any("cap cut" in e.message for e in rec.events)


def test_invisible_characters_in_an_answer_reach_no_one() -> None:
    """Tag characters and bidi overrides never reach the clerk, the seats or the record."""
    hidden = "JSON is best\u202e\u2066 \U000e0049\U000e0047\U000e004e\U000e004f\U000e0052\U000e0045"
    rec, asker = _split_with(hidden)
    for text in (_others_prompts(asker), rec.model_dump_json()):
        assert "\u202e" not in text
        assert "\U000e0049" not in text
        assert "\\u202e" not in text
        assert "\\udb40" not in text


def test_a_seat_that_names_itself_is_not_relayed_by_name() -> None:
    """ "As Claude, by Anthropic" is redacted before the others read it; counted, not kept."""
    rec, asker = _split_with("As Claude, by Anthropic, I prefer JSON.")
    relayed = _others_prompts(asker)
    assert "Claude" not in relayed
    assert "Anthropic" not in relayed
    assert "As [redacted], by [redacted], I prefer JSON." in relayed
    kinds = {r.kind for r in rec.redactions if r.where.startswith("answer:sage-3")}
    assert kinds == {"author_identity"}


def test_a_name_the_question_uses_is_an_answer_not_a_leak() -> None:
    """Asked "Claude or Gemini?", a seat must be able to answer "Gemini"."""
    _, asker = _split_with("Gemini has the longer context.", "Claude or Gemini for the bot?")
    assert "Gemini has the longer context." in _others_prompts(asker)


def test_a_secret_in_an_answer_is_redacted_before_it_travels() -> None:
    """A token a seat quotes is replaced everywhere; the record holds kind and count only."""
    token = "ghp_" + "A1b2C3d4" * 5
    rec, asker = _split_with(f"JSON; the deploy token is {token}")
    assert token not in _others_prompts(asker)
    assert token not in rec.model_dump_json()
    assert any(r.kind == "github_token" for r in rec.redactions)


def test_the_record_keeps_the_question_without_its_secrets() -> None:
    """run.json's `original` is the question as given, less the values it redacted."""
    secret = "ghp_" + "Z9y8X7w6" * 5
    rec, _ = ch.record(ch.config(3), f"Rotate {secret} or keep it?")
    assert secret not in rec.model_dump_json()
    assert "[REDACTED:github_token]" in rec.question.original


def test_a_question_over_the_cap_is_refused_before_anything_is_recorded() -> None:
    """[graph] task_max_bytes holds for a council's question as for a task."""
    cfg = ch.config(3)
    with pytest.raises(UsageError, match=r"the question is \d+ bytes, over the 65536-byte cap"):
        ch.record(cfg, "?" * 70_000)


def test_evidence_over_the_cap_is_cut_and_marked() -> None:
    """A diff larger than [graph] patch_max_bytes reaches the seats cut, the cut marked."""
    cfg = ch.config(3)
    rec, bodies = ch.record(cfg, "Review this", evidence=[("d", "pull.diff", "+a\n" * 150_000)])
    (body,) = bodies
    assert len(body.body.encode()) < 210_000
    assert "characters cut by magi" in body.body
    assert rec.evidence[0].chars == len(body.body)


def test_a_missing_question_file_is_a_usage_error(tmp_path: Path, monkeypatch) -> None:
    """`magi council --file missing.md`: one line naming the file, exit 2, no traceback."""
    monkeypatch.chdir(tmp_path)
    res = invoke(["council", "--file", str(tmp_path / "missing.md")])
    assert res.exit_code == 2, res.output
    assert "missing.md" in res.output
    assert "Traceback" not in res.output


def test_a_secret_split_by_an_invisible_character_is_stored_nowhere() -> None:
    """`ghp_…<ZWSP>…`: redacted once the character is gone, and so the question as given
    must not be kept whole either; evidence is cleaned of it before the scanner reads it."""
    token = "ghp_" + "A1b2C3d4E5" + "\u200b" + "f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    joined = token.replace("\u200b", "")
    rec, bodies = ch.record(
        ch.config(3), f"Rotate {token} now?", evidence=[("d", "x.diff", f"+key = {token}\n")]
    )
    stored = rec.model_dump_json()
    assert joined not in stored
    assert token not in stored
    assert "\\u200b" not in stored.split('"removed"')[0]
    (body,) = bodies
    assert joined not in body.body
    assert token not in body.body


def test_the_competition_keeps_no_split_secret_in_its_original() -> None:
    from magi.core.text.sanitize import clean_task, redact_secrets, stored_original

    token = "ghp_" + "A1b2C3d4E5" + "\u200b" + "f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    task = f"deploy with {token}"
    cleaned, _ = clean_task(task)
    cleaned, found = redact_secrets(cleaned, "task")
    kept = stored_original(task, cleaned, sum(r.count for r in found), "task")
    assert "f6G7h8I9j0K1l2M3n4O5p6Q7r8" not in kept
    assert kept == cleaned
    plain = stored_original("no secret\u200b here", "no secret here", 0, "task")
    assert plain == "no secret\u200b here"  # nothing hidden behind it: kept as given
