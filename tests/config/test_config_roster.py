"""The default roster: one agent per CLI found on PATH, when no config declares one."""

from __future__ import annotations

from magi.config.roster import default_agents


def test_one_agent_per_found_kind_named_after_it() -> None:
    """Ids are the kind names, in the order found, with no model pinned."""
    agents = default_agents(["codex", "claude"])
    assert [(a.id, a.kind, a.model) for a in agents] == [
        ("codex", "codex", None),
        ("claude", "claude", None),
    ]


def test_duplicates_and_command_are_skipped() -> None:
    """A kind is one seat, and kind=command cannot run without a configured argv."""
    assert [a.id for a in default_agents(["claude", "command", "claude"])] == ["claude"]


def test_nothing_found_is_an_empty_roster() -> None:
    """No CLI on PATH gives no agents rather than an error; the caller decides what to say."""
    assert default_agents([]) == []


def test_antigravity_is_seated_by_its_kind_name() -> None:
    """The id is the kind (antigravity), not the executable it is found by (agy)."""
    assert [(a.id, a.kind) for a in default_agents(["antigravity"])] == [
        ("antigravity", "antigravity")
    ]
