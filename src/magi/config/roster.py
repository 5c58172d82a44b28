"""The roster magi builds when no config declares one: one seat per agent CLI found on PATH.

Finding the CLIs is I/O and belongs to ``magi.agents.discover``, which knows each kind's
executable from the registry (antigravity's is ``agy``); turning the kinds it found into
agents is this module's pure part.
"""

from __future__ import annotations

from collections.abc import Iterable

from magi.model.config import AgentConfig


def default_agents(found_kinds: Iterable[str]) -> list[AgentConfig]:
    """One agent per found kind, its id the kind's name, in the order given.

    Duplicates are dropped (a kind is one CLI, hence one roster entry), and so is
    ``command``, which cannot run without an argv that only a config can supply. No model
    is pinned: each CLI runs its own default, which is what its plan is set up for.
    """
    agents: list[AgentConfig] = []
    seen: set[str] = set()
    for kind in found_kinds:
        if kind in seen or kind == "command":
            continue
        seen.add(kind)
        agents.append(AgentConfig(id=kind, kind=kind))
    return agents
