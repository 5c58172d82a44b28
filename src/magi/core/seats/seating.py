"""Seating: which roster agent sits in which seat, and who takes a seat an agent lost.

Conversations belong to seats (``impl-B``, ``judge-2``), never to agents: the model that
wrote candidate B may also sit as judge 3, and it still cannot recognise its own work,
because the judge seat's conversation never contained the implementation.

A role listed in ``[roles]`` is used as written, cycled to the number of seats. An empty
role rotates through the roster (the ``[[agents]]`` order): implementer ``i`` is
``roster[i % n]``, reviewers likewise, and judge ``i`` is ``roster[(i + 1) % n]``, rotated
by one so that with more than one agent judge ``i`` is never the author of candidate
``i``. Which candidate a judge is shown first is decided elsewhere (``blind.judge_order``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

from magi.errors import ConfigError
from magi.model.config import Config

SeatRole = Literal["impl", "judge", "review", "fix"]


@dataclass(frozen=True)
class Seating:
    """Agent ids per seat slot: ``implementers[i]`` builds slot i; ``judges[i]`` sits as
    ``judge-{i + 1}`` and ``reviewers[i]`` as ``review-{i + 1}``.

    ``fixer`` None means the winner's own author fixes, continuing its own conversation.
    ``planner`` None means the role is unset and the caller picks its default.
    """

    implementers: tuple[str, ...]
    judges: tuple[str, ...]
    reviewers: tuple[str, ...]
    fixer: str | None
    planner: str | None


def _cycle(agents: Sequence[str], count: int, shift: int = 0) -> tuple[str, ...]:
    return tuple(agents[(i + shift) % len(agents)] for i in range(count))


def assign_seats(config: Config) -> Seating:
    """The seat assignment for ``config`` (see the module docstring for the rule)."""
    roster = [agent.id for agent in config.agents]
    if not roster:
        raise ConfigError("no agents: declare at least one [[agents]] entry")
    roles, graph = config.roles, config.graph
    # The one-seat shift applies to the rotation only: a [roles] judges list is as written.
    judge_shift = 0 if roles.judges else 1
    return Seating(
        implementers=_cycle(roles.implementers or roster, graph.candidates),
        judges=_cycle(roles.judges or roster, graph.judges, shift=judge_shift),
        reviewers=_cycle(roles.reviewers or roster, graph.reviewers),
        fixer=roles.fixer,
        planner=roles.planner,
    )


def failover_agent(roster: Sequence[str], tried: Collection[str]) -> str | None:
    """The next roster agent not yet tried for a seat, or None when all have been.

    The search starts after the last tried agent, so a seat handed on twice keeps moving
    forward through the roster instead of restarting at its top. "Last" is the final
    element when ``tried`` is a sequence (the order the seat was handed on), and the
    latest in roster order when it is an unordered collection, so the answer never
    depends on set iteration order.
    """
    if not roster:
        return None
    known = [agent for agent in tried if agent in roster]
    if not known:
        anchor = -1
    elif isinstance(tried, Sequence):
        anchor = roster.index(known[-1])
    else:
        anchor = max(roster.index(agent) for agent in known)
    for step in range(1, len(roster) + 1):
        agent = roster[(anchor + step) % len(roster)]
        if agent not in tried:
            return agent
    return None


def seat_name(role: SeatRole, index_or_label: int | str | None = None) -> str:
    """A seat's name: ``impl-B`` (by label), ``judge-2``, ``review-1`` (by number), ``fix``.

    The number is the one in the name, so ``seat_name("judge", 2) == "judge-2"``. A 0 is
    refused rather than shifted: a caller passing a 0-based index fails on its first seat
    instead of silently naming every judge one off.
    """
    if role == "impl":
        if not (isinstance(index_or_label, str) and len(index_or_label) == 1):
            raise ValueError(f"an impl seat is named by its label, got {index_or_label!r}")
        return f"impl-{index_or_label}"
    if role in ("judge", "review"):
        if isinstance(index_or_label, bool) or not isinstance(index_or_label, int):
            raise ValueError(f"a {role} seat is named by its number, got {index_or_label!r}")
        if index_or_label < 1:
            raise ValueError(f"{role} seats are numbered from 1, got {index_or_label}")
        return f"{role}-{index_or_label}"
    if role == "fix":
        if index_or_label is not None:
            raise ValueError(f"there is one fix seat; got {index_or_label!r}")
        return "fix"
    raise ValueError(f"unknown seat role {role!r}")
