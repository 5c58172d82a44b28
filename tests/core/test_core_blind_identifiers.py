"""The leak scan reads identifiers split at their joins, and the roster's model names."""

from __future__ import annotations

import pytest

from magi.core.compete.blind import leak_terms, model_terms, redact_terms, scan_leaks
from magi.model.config import AgentConfig

TERMS = leak_terms([])


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("class ClaudeHelper:", "claude"),
        ("import gpt_utils.py", "gpt"),
        ("GPTClient()", "gpt"),
        ("myOpenCodeThing = 1", "opencode"),
        ("useGeminiPro()", "gemini"),
        ("claude3 = 1", "claude"),
        ("OpenAI()", "openai"),
    ],
)
def test_camel_and_snake_joins_are_boundaries(text: str, term: str) -> None:
    """A vendor inside an identifier is found, and redacted in place."""
    assert term in scan_leaks(text, TERMS)
    assert "[redacted]" in redact_terms(text, TERMS)


@pytest.mark.parametrize("text", ["claudette", "Xclaude", "gptq", "agyx"])
def test_other_words_are_still_other_words(text: str) -> None:
    """No join, no match: a longer word that merely contains a term is left alone."""
    assert scan_leaks(text, TERMS) == []


def test_model_names_yield_their_family_words() -> None:
    """provider/model segments and distinctive words are terms; generic words are not."""
    terms = model_terms("anthropic/claude-sonnet-4-5")
    assert {"anthropic/claude-sonnet-4-5", "claude-sonnet-4-5", "sonnet"} <= set(terms)
    assert "mini" not in model_terms("gpt-5-mini")


def test_a_roster_model_alias_is_found_in_a_patch() -> None:
    """model = "sonnet-latest": "SonnetWrapper" in a patch names it."""
    agents = [AgentConfig(id="a1", kind="command", command=["x"], model="sonnet-latest")]
    assert "sonnet" in scan_leaks("class SonnetWrapper: ...", leak_terms(agents))
