"""Help texts say config names in brackets as written: rich markup must not eat them."""

from __future__ import annotations

from magi.testing.cli import invoke


def _flat(text: str) -> str:
    return " ".join(text.replace("│", " ").split())


def test_a_bracketed_config_name_survives_the_help() -> None:
    assert "([graph] task_max_bytes)" in _flat(invoke(["run", "--help"]).output)
    assert "to check [github] runner_labels" in _flat(invoke(["doctor", "--help"]).output)
    assert "A [council.panels] name" in _flat(invoke(["council", "--help"]).output)


def test_the_root_help_has_no_markup_left() -> None:
    said = invoke(["--help"]).output
    assert "Bare `magi` prints" in said
    assert "[bold]" not in said
