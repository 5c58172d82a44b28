"""Seating: rotation through the roster, explicit roles, failover, seat names."""

from __future__ import annotations

from typing import Any

import pytest

from magi.core.seats.seating import Seating, assign_seats, failover_agent, seat_name
from magi.errors import ConfigError
from magi.model.config import AgentConfig, Config, Graph, Roles


def config(ids: list[str], roles: Roles | None = None, **graph: Any) -> Config:
    agents = [AgentConfig(id=i, kind="claude") for i in ids]
    return Config(agents=agents, roles=roles or Roles(), graph=Graph(**graph))


def test_empty_roles_rotate_through_the_roster() -> None:
    """Implementers and reviewers follow the roster; judges are rotated by one."""
    seats = assign_seats(config(["a1x", "b2x", "c3x"], candidates=3, judges=3, reviewers=2))
    assert seats == Seating(
        implementers=("a1x", "b2x", "c3x"),
        judges=("b2x", "c3x", "a1x"),
        reviewers=("a1x", "b2x"),
        fixer=None,
        planner=None,
    )


@pytest.mark.parametrize("n", [2, 3, 4])
def test_judge_i_is_never_the_author_of_candidate_i(n: int) -> None:
    """With more than one agent, the rotated judge seat never meets its own slot."""
    ids = [f"agent{i}" for i in range(n)]
    seats = assign_seats(config(ids, candidates=5, judges=5))
    assert all(j != a for j, a in zip(seats.judges, seats.implementers, strict=True))


def test_more_seats_than_agents_cycle() -> None:
    """A two-agent roster fills three candidate seats by cycling."""
    seats = assign_seats(config(["one", "two"], candidates=3, judges=3))
    assert seats.implementers == ("one", "two", "one")
    assert seats.judges == ("two", "one", "two")


def test_roles_are_used_as_written_and_cycled() -> None:
    """A set role is cycled to the seat count, with no rotation applied."""
    roles = Roles(implementers=["x"], judges=["y", "z"], reviewers=["z"], fixer="y", planner="x")
    seats = assign_seats(config(["x", "y", "z"], roles, candidates=3, judges=3, reviewers=2))
    assert seats.implementers == ("x", "x", "x")
    assert seats.judges == ("y", "z", "y")
    assert seats.reviewers == ("z", "z")
    assert (seats.fixer, seats.planner) == ("y", "x")


def test_zero_seats_give_empty_tuples() -> None:
    """A panel of no judges and no reviewers seats nobody."""
    seats = assign_seats(config(["only"], candidates=1, judges=0, reviewers=0))
    assert (seats.implementers, seats.judges, seats.reviewers) == (("only",), (), ())


def test_empty_roster_is_a_config_error() -> None:
    """No agents at all cannot be seated."""
    with pytest.raises(ConfigError, match="no agents"):
        assign_seats(Config())


def test_failover_moves_to_the_next_untried_agent() -> None:
    """The next agent after the last one tried, wrapping around the roster."""
    roster = ["a", "b", "c", "d"]
    assert failover_agent(roster, ["c"]) == "d"
    assert failover_agent(roster, ["c", "d"]) == "a"
    assert failover_agent(roster, ["d", "a"]) == "b"


def test_failover_with_nothing_tried_starts_at_the_top() -> None:
    """An untried seat gets the first roster agent."""
    assert failover_agent(["a", "b"], []) == "a"


def test_failover_is_none_when_everyone_was_tried() -> None:
    """Nobody left means no failover."""
    assert failover_agent(["a", "b"], {"a", "b"}) is None
    assert failover_agent([], []) is None


def test_failover_with_a_set_is_deterministic() -> None:
    """An unordered collection anchors on the latest roster agent tried."""
    assert failover_agent(["a", "b", "c", "d"], {"b", "a"}) == "c"
    assert failover_agent(["a", "b", "c", "d"], frozenset({"d", "b"})) == "a"


def test_failover_ignores_agents_outside_the_roster() -> None:
    """A tried id that is not in the roster does not anchor the search."""
    assert failover_agent(["a", "b"], ["gone"]) == "a"


@pytest.mark.parametrize(
    ("role", "which", "name"),
    [
        ("impl", "B", "impl-B"),
        ("judge", 2, "judge-2"),
        ("review", 1, "review-1"),
        ("fix", None, "fix"),
    ],
)
def test_seat_names(role: Any, which: Any, name: str) -> None:
    """Seats are named by label, by 1-based number, or alone."""
    assert seat_name(role, which) == name


@pytest.mark.parametrize(
    ("role", "which"),
    [("judge", 0), ("review", -1), ("judge", "2"), ("impl", 1), ("impl", "AB"), ("fix", 1)],
)
def test_malformed_seat_names_are_refused(role: Any, which: Any) -> None:
    """A 0-based index, a number for a label or a label for a number fails loudly."""
    with pytest.raises(ValueError, match=r"seat|numbered"):
        seat_name(role, which)


def test_unknown_seat_role_is_refused() -> None:
    """Only impl, judge, review and fix seats exist."""
    with pytest.raises(ValueError, match="unknown seat role"):
        seat_name("chat", None)  # type: ignore[arg-type]
