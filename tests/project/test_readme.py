"""README stays true: its first lines are the two commands, its diagram is PIPELINE."""

from __future__ import annotations

from pathlib import Path

from magi.graph import PIPELINE, mermaid

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_opens_with_the_two_commands():
    """A fresh clone needs only `make demo` and `make test`: they come first."""
    head = README.read_text().split("```", 2)[1]
    assert "make demo" in head
    assert "make test" in head


def test_readme_diagram_is_drawn_from_the_pipeline():
    """The diagram in README is exactly what magi.graph.mermaid(PIPELINE) draws."""
    assert f"```mermaid\n{mermaid(PIPELINE)}\n```" in README.read_text()
