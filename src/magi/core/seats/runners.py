"""Where agents run: the runner labels of each agent, and of a job that seats them.

A team's subscriptions live on machines: one person's claude login on one runner, a codex
login on another. ``[[agents]] runner_labels`` names the runners an agent's CLI is logged in
on (default: ``[github] runner_labels``). A job that may seat an agent must run on a runner
with every label that agent asks for; a competition's seats change hands on failover (any
agent of the roster may take a lost seat), so the one job a competition is today runs where
every agent of the roster can: the union of their labels, ``[github] runner_labels`` first.

Or it runs in stages (``docs/fan-out.md``): the agents job knows the labels it was
scheduled with (``MAGI_JOB_LABELS``, and those its runner declares, ``MAGI_RUNNER_LABELS``);
a seat whose agent needs others is not asked there, the run is handed off, and the next
stage runs on the first label set the run waits for, in the roster's order (the public
config's order, never the order in which candidates asked).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from magi.errors import ConfigError
from magi.model.config import RUNNER_LABEL, AgentConfig, Config

__all__ = [
    "JOB_LABELS",
    "JOINED_SEATS",
    "PANEL_NODES",
    "RUNNER_LABELS",
    "STAGE_SEATS",
    "Served",
    "agent_labels",
    "first_stage",
    "fork_groups",
    "has_labels",
    "job_labels",
    "job_labels_of",
    "joined",
    "joined_entry",
    "joined_seats",
    "labels_here",
    "next_stage",
    "runner_host",
    "same_labels",
    "served_here",
    "stage_seats",
]

JOB_LABELS = "MAGI_JOB_LABELS"  # the agents job's runs-on labels (the workflow sets it)
STAGE_SEATS = "MAGI_STAGE_SEATS"  # a fork's seat job: the only seats it may ask (JSON list)
# A join's pass: the wave it joined and the seats its seat jobs asked in it (JSON: {"node":
# ..., "seats": [...]}), not asked again in that wave before the next pass, whatever they
# ended in, as a wave on one runner asks each seat once.
JOINED_SEATS = "MAGI_JOINED_SEATS"
# The waves whose seats are judges'. A judge's runner may be a machine that must not learn
# who wrote which candidate: its seat job works from a panel (the run with no author in
# it, ``magi.report.before_tally.panel_copy``), never the sealed run.
PANEL_NODES = frozenset({"judge", "deliberate", "vote"})
RUNNER_LABELS = "MAGI_RUNNER_LABELS"  # the labels a runner declares (its service's .env)


def agent_labels(config: Config, agent: AgentConfig) -> list[str]:
    """The labels a runner needs to seat ``agent``."""
    return list(agent.runner_labels or config.github.runner_labels)


def first_stage(config: Config) -> list[str]:
    """The labels a competition's agents job starts on: ``[github] runner_labels``. A seat
    whose agent needs more is handed to a runner with them (``next_stage``), so no runner
    need hold every login of the roster."""
    return list(config.github.runner_labels)


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


def _strings(text: str, name: str, what: str) -> list[str]:
    """``text`` as a JSON list of strings; a ConfigError naming ``name`` otherwise."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
        raise ConfigError(f"{name} is not a JSON list of {what}: {text[:80]!r}")
    return data


def _parse(value: str, name: str) -> list[str]:
    """A JSON list of runner labels, or labels separated by commas."""
    text = value.strip()
    parts = _strings(text, name, "labels") if text.startswith("[") else text.split(",")
    labels = [x.strip() for x in parts if x.strip()]
    bad = [label for label in labels if not RUNNER_LABEL.fullmatch(label)]
    if bad:
        raise ConfigError(f"{name}: not runner labels: {', '.join(repr(b) for b in bad)}")
    return labels


def labels_here(environ: Mapping[str, str]) -> frozenset[str] | None:
    """The labels of the runner this process runs on, as far as it knows them: the job's
    ``runs-on`` and what the runner declares. None outside a staged agents job (the CLI, a
    council, an older workflow): every agent is seated where it runs, as always. A value
    that is not labels is a ``ConfigError`` naming the variable (preflight reports it)."""
    job = job_labels_of(environ)
    if job is None:
        return None
    both = job + _parse(environ.get(RUNNER_LABELS, ""), RUNNER_LABELS)
    return frozenset(label.casefold() for label in both)  # GitHub matches labels so


def next_stage(config: Config, wanted: Sequence[Sequence[str]]) -> list[str] | None:
    """The label set the next stage runs on: of those ``wanted``, the first an agent of the
    roster asks for, in the roster's order (None when nothing is wanted)."""
    sets = [list(w) for w in wanted]
    keys = {same_labels(w) for w in sets}
    for agent in config.agents:
        labels = agent_labels(config, agent)
        if same_labels(labels) in keys:
            return labels
    return sets[0] if sets else None


def runner_host(environ: Mapping[str, str]) -> str | None:
    """Which runner this is (GitHub's ``RUNNER_NAME``), None off a runner: a seat's CLI
    conversation lives on the runner that had it."""
    return environ.get("RUNNER_NAME", "").strip() or None


def job_labels_of(environ: Mapping[str, str]) -> list[str] | None:
    """The labels the job was scheduled with (``MAGI_JOB_LABELS``), None outside one."""
    job = environ.get(JOB_LABELS, "")
    return _parse(job, JOB_LABELS) if job.strip() else None


def stage_seats(environ: Mapping[str, str]) -> frozenset[str] | None:
    """The seats a fork's seat job may ask, None in any other job."""
    raw = environ.get(STAGE_SEATS, "")
    return frozenset(_strings(raw, STAGE_SEATS, "seats")) if raw.strip() else None


def joined_entry(node: str, round: int, seat: str) -> str:
    """One seat a join's seat jobs asked: ``node:round:seat`` (``Run.joined``)."""
    return f"{node}:{round}:{seat}"


def joined(entries: Iterable[str]) -> str:
    """``JOINED_SEATS``'s value: every seat the joins of this pass took from seat jobs."""
    return json.dumps(sorted(set(entries)))


def joined_seats(environ: Mapping[str, str], node: str, round: int = 0) -> frozenset[str]:
    """The seats of ``node``'s wave (``round``: the review round, or the deliberation round;
    0 for a wave a run has once) that a join's seat jobs asked in this pass: empty for any
    other wave, and in any other pass. A judge's vote is its own wave, not its judgement's,
    and the next review round of the same pass is a wave of its own."""
    raw = environ.get(JOINED_SEATS, "")
    if not raw.strip():
        return frozenset()
    out = set()
    for entry in _strings(raw, JOINED_SEATS, "joined seats"):
        wave, _, rest = entry.partition(":")
        number, _, seat = rest.partition(":")
        if not (wave and number.isdigit() and seat):
            raise ConfigError(f"{JOINED_SEATS}: {entry[:80]!r} is not node:round:seat")
        if wave == node and int(number) == round:
            out.add(seat)
    return frozenset(out)


def fork_groups(
    config: Config, seat_agents: Sequence[tuple[str, str]]
) -> list[tuple[list[str], list[str]]]:
    """The seats, grouped by the labels their agents need: (labels, seats), the groups in
    the roster's order (the public config's), the seats in the order given."""
    by: dict[tuple[str, ...], list[str]] = {}
    shown: dict[tuple[str, ...], list[str]] = {}
    for seat, agent_id in seat_agents:
        labels = agent_labels(config, config.agent(agent_id))
        by.setdefault(same_labels(labels), []).append(seat)
        shown.setdefault(same_labels(labels), labels)
    order: list[tuple[str, ...]] = []
    for each in config.agents:
        key = same_labels(agent_labels(config, each))
        if key in by and key not in order:
            order.append(key)
    order += [k for k in by if k not in order]
    return [(shown[k], by[k]) for k in order]


def has_labels(here: frozenset[str], labels: Sequence[str]) -> bool:
    """Whether a runner with the labels ``here`` (``labels_here``) has every one of ``labels``."""
    return set(same_labels(labels)) <= here


def same_labels(labels: Sequence[str]) -> tuple[str, ...]:
    """A label set as GitHub matches it: in no order, whatever the case."""
    return tuple(sorted({label.casefold() for label in labels}))
