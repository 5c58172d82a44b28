"""Configs that can never reach a tally are named before anything is spent."""

from __future__ import annotations

from magi.core.compete.reach import unreachable
from magi.model.config import Config

AGENTS = [{"id": "a", "kind": "claude"}]


def test_no_judges_with_several_candidates_cannot_reach_a_tally() -> None:
    """judges = 0, candidates = 3: refused, with what to change."""
    cfg = Config.model_validate({"agents": AGENTS, "graph": {"judges": 0, "candidates": 3}})
    [problem] = unreachable(cfg)
    assert "judges = 0" in problem
    assert "set judges >= 1" in problem


def test_one_candidate_needs_no_judge_and_the_default_panel_is_fine() -> None:
    """Uncontested (one candidate) and the default shape both reach a tally."""
    one = Config.model_validate({"agents": AGENTS, "graph": {"judges": 0, "candidates": 1}})
    assert unreachable(one) == []
    assert unreachable(Config.model_validate({"agents": AGENTS})) == []
