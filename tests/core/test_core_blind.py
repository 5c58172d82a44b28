"""Blinding: labels, presentation orders, trailers, and author-leak scans."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from magi.core.compete.blind import (
    COMMIT_MSG_HOOK,
    LABELS,
    VENDOR_TERMS,
    judge_order,
    leak_terms,
    redact_terms,
    scan_leaks,
    shuffle_labels,
    strip_trailers,
)
from magi.model.config import AgentConfig

SIGNED = (
    "Add retries to the uploader\n"
    "\n"
    "Retries three times with backoff.\n"
    "\n"
    "🤖 Generated with [Claude Code](https://claude.com/claude-code)\n"
    "\n"
    "Co-Authored-By: Claude <noreply@anthropic.com>\n"
)
UNSIGNED = "Add retries to the uploader\n\nRetries three times with backoff.\n"


def test_labels_are_a_permutation_of_the_first_letters() -> None:
    """Labels for n slots are exactly the first n letters, each once."""
    assert sorted(shuffle_labels(5, seed=7)) == list(LABELS[:5])


def test_same_seed_reproduces_the_labels() -> None:
    """The seed alone decides the assignment."""
    assert shuffle_labels(6, seed=42) == shuffle_labels(6, seed=42)


def test_different_seeds_give_different_labels() -> None:
    """Seeds actually shuffle: across ten seeds, more than one assignment comes out."""
    assignments = {tuple(shuffle_labels(6, seed=s)) for s in range(10)}
    assert len(assignments) > 1


def test_slot_zero_is_not_always_a() -> None:
    """The shuffle reaches slot 0, so roster order cannot be read back from the labels."""
    assert {shuffle_labels(3, seed=s)[0] for s in range(30)} == {"A", "B", "C"}


@pytest.mark.parametrize("count", [0, 27])
def test_label_count_out_of_range_is_refused(count: int) -> None:
    """There is no label for a 27th slot, and no run with no candidate."""
    with pytest.raises(ValueError, match="count"):
        shuffle_labels(count, seed=1)


def test_each_judge_gets_its_own_order() -> None:
    """With as many judges as candidates, every judge sees a different order."""
    labels = ["A", "B", "C"]
    orders = [tuple(judge_order(labels, seed=3, judge_index=j)) for j in range(3)]
    assert len(set(orders)) == 3
    assert all(sorted(order) == labels for order in orders)


def test_every_candidate_is_shown_first_once() -> None:
    """The rotation spreads first place: no label is first for two of n judges."""
    firsts = [judge_order("ABCD", seed=9, judge_index=j)[0] for j in range(4)]
    assert sorted(firsts) == ["A", "B", "C", "D"]


def test_judge_order_is_deterministic_and_ignores_input_order() -> None:
    """The same seed and judge give the same order, however the labels were held."""
    assert judge_order(["C", "A", "B"], seed=5, judge_index=1) == judge_order(
        ["A", "B", "C"], seed=5, judge_index=1
    )


def test_judge_order_refuses_duplicate_labels() -> None:
    """A label listed twice is a caller bug, not a candidate."""
    with pytest.raises(ValueError, match="distinct"):
        judge_order(["A", "A"], seed=1, judge_index=0)


def test_strip_trailers_removes_signature_lines() -> None:
    """The Claude Code signature block goes, with the blank lines it leaves."""
    assert strip_trailers(SIGNED) == UNSIGNED


@pytest.mark.parametrize(
    "trailer",
    [
        "co-authored-by: someone <a@b.c>",
        "  Co-Authored-By :someone",
        "CO-AUTHORED-BY:x",
        "Co authored by: x",
        "Generated with some tool",
        "- generated with [Tool](https://example.com)",
    ],
)
def test_strip_trailers_any_case_and_spacing(trailer: str) -> None:
    """Trailers are recognised in any case and spacing."""
    assert strip_trailers(f"Fix it\n\n{trailer}\n") == "Fix it\n"


def test_strip_trailers_keeps_ordinary_lines() -> None:
    """A line that merely mentions co-authors or generation stays."""
    message = "Document how code is generated with protoc\n\nThanks to co-authors.\n"
    assert strip_trailers(message) == message


def _run_hook(tmp_path: Path, message: str) -> str:
    hook = tmp_path / "commit-msg"
    hook.write_text(COMMIT_MSG_HOOK)
    msg = tmp_path / "COMMIT_EDITMSG"
    msg.write_bytes(message.encode())
    subprocess.run(["sh", str(hook), str(msg)], check=True, timeout=30)
    return msg.read_bytes().decode()


def test_hook_strips_like_python(tmp_path: Path) -> None:
    """The commit-msg hook deletes what strip_trailers deletes."""
    assert _run_hook(tmp_path, SIGNED) == UNSIGNED


def test_hook_handles_a_message_without_trailing_newline(tmp_path: Path) -> None:
    """A last line without a newline is still read, and still stripped."""
    assert _run_hook(tmp_path, SIGNED.rstrip("\n")) == UNSIGNED
    assert _run_hook(tmp_path, "Fix it\n\nCo-Authored-By: x") == "Fix it\n"


def test_hook_keeps_a_clean_message(tmp_path: Path) -> None:
    """A message with no trailer comes through unchanged and leaves no temp file."""
    assert _run_hook(tmp_path, UNSIGNED) == UNSIGNED
    assert sorted(p.name for p in tmp_path.iterdir()) == ["COMMIT_EDITMSG", "commit-msg"]


@pytest.mark.parametrize(
    "message",
    [
        "Fix it\n\nco-authored-by: someone <a@b.c>\n",
        "Fix it\n\n  Co-Authored-By :someone\n\n\n",
        "Fix it\n\nCo authored by: x\nGenerated with some tool\n",
        "Fix it\n\n- generated with [Tool](https://example.com)\n",
        "Document how code is generated with protoc\n\nThanks to co-authors.\n",
    ],
)
def test_hook_agrees_with_strip_trailers(tmp_path: Path, message: str) -> None:
    """The shell hook and the Python stripper give the same message."""
    assert _run_hook(tmp_path, message) == strip_trailers(message)


def test_hook_is_posix_sh() -> None:
    """The hook starts with a /bin/sh shebang and avoids bash-only syntax."""
    assert COMMIT_MSG_HOOK.startswith("#!/bin/sh\n")
    for bashism in ("[[", "$'", "<<<", "function ", "local "):
        assert bashism not in COMMIT_MSG_HOOK


def _agents() -> list[AgentConfig]:
    return [
        AgentConfig(id="opus", kind="claude", model="claude-opus-4-1"),
        AgentConfig(id="oc", kind="opencode", model="Sonnet"),
        AgentConfig(id="mock", kind="command", command=["sh", "run.sh"]),
        AgentConfig(id="OPUS2", kind="claude", model="sonnet"),
    ]


def test_leak_terms_cover_vendors_ids_and_models() -> None:
    """Vendor names, roster ids and configured models are all terms."""
    terms = leak_terms(_agents())
    for term in ("claude", "openai", "agy", "opus", "claude-opus-4-1", "Sonnet", "mock"):
        assert term in terms


def test_leak_terms_skip_short_ids_and_the_command_kind() -> None:
    """Two-letter ids and the neutral kind "command" would match everyday text."""
    terms = [t.casefold() for t in leak_terms(_agents())]
    assert "oc" not in terms
    assert "command" not in terms


def test_leak_terms_are_deduplicated_case_insensitively() -> None:
    """Each term appears once, whatever its case in the config."""
    terms = [t.casefold() for t in leak_terms(_agents())]
    assert len(terms) == len(set(terms))
    assert terms[: len(VENDOR_TERMS)] == list(VENDOR_TERMS)


def test_scan_finds_a_vendor_name_in_code() -> None:
    """A vendor in a comment or identifier is found; snake_case counts as a word break."""
    patch = "+# Written with ChatGPT\n+client = openai_client()\n"
    assert scan_leaks(patch, VENDOR_TERMS) == ["openai", "chatgpt"]


def test_scan_finds_an_agent_id_in_a_commit_message() -> None:
    """A roster id in a commit message is a leak."""
    assert scan_leaks("Fix uploader (opus)", leak_terms(_agents())) == ["opus"]


def test_scan_matches_whole_words_only() -> None:
    """claudette, gptq and opusfile are other words."""
    assert scan_leaks("claudette uses gptq and opusfile", leak_terms(_agents())) == []


def test_scan_reports_each_term_once_in_term_order() -> None:
    """Repeated hits collapse to one, listed in the order the terms were given."""
    text = "Gemini, then CLAUDE, then gemini again, gpt-4o"
    assert scan_leaks(text, ["claude", "gpt", "gemini"]) == ["claude", "gpt", "gemini"]


def test_redact_replaces_every_hit() -> None:
    """Every whole-word hit becomes [redacted]; other words are untouched."""
    assert (
        redact_terms("Claude and claude-opus-4-1 wrote claudette", ["claude", "claude-opus-4-1"])
        == "[redacted] and [redacted] wrote claudette"
    )


def test_no_terms_find_nothing() -> None:
    """An empty term list neither matches nor changes anything."""
    assert scan_leaks("claude", []) == []
    assert redact_terms("claude", []) == "claude"
