"""Where agents run: the runner labels of each agent, and of a job that seats them.

A team's subscriptions live on machines: one person's claude login on one runner, a codex
login on another. ``[[agents]] runner_labels`` names the runners an agent's CLI is logged in
on (default: ``[github] runner_labels``). A job that may seat an agent must run on a runner
with every label that agent asks for; a competition's seats change hands on failover (any
agent of the roster may take a lost seat), so the one job a competition is today runs where
every agent of the roster can: the union of their labels, ``[github] runner_labels`` first.
``docs/fan-out.md`` says what spreading one competition over several runners adds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from magi.model.config import AgentConfig, Config

__all__ = ["Served", "agent_labels", "job_labels", "served_here"]


def agent_labels(config: Config, agent: AgentConfig) -> list[str]:
    """The labels a runner needs to seat ``agent``."""
    return list(agent.runner_labels or config.github.runner_labels)


def job_labels(config: Config) -> list[str]:
    """The ``runs-on`` labels of a job that may seat any agent of the roster, in order."""
    labels = list(config.github.runner_labels)
    for agent in config.agents:
        labels += [label for label in agent_labels(config, agent) if label not in labels]
    return labels


@dataclass(frozen=True)
class Served:
    """What a runner with ``labels`` can seat: the agents it can, and for each it cannot, the
    labels it lacks."""

    here: tuple[str, ...]
    lacking: dict[str, tuple[str, ...]]


def served_here(config: Config, labels: Sequence[str]) -> Served:
    have = set(labels)
    here: list[str] = []
    lacking: dict[str, tuple[str, ...]] = {}
    for agent in config.agents:
        missing = tuple(label for label in agent_labels(config, agent) if label not in have)
        if missing:
            lacking[agent.id] = missing
        else:
            here.append(agent.id)
    return Served(here=tuple(here), lacking=lacking)
