"""Where agents run: the labels a job knows it has, and which stage a handed-off run goes to."""

from __future__ import annotations

import re

import pytest

from magi.core.seats.runners import (
    first_stage,
    fork_groups,
    has_labels,
    job_labels,
    labels_here,
    next_stage,
    stage_seats,
)
from magi.errors import ConfigError
from magi.model.config import AgentConfig, Config, Github

POOL = ["self-hosted", "magi"]


def _config() -> Config:
    return Config(
        github=Github(runner_labels=POOL),
        agents=[
            AgentConfig(id="claude", kind="claude"),
            AgentConfig(id="codex", kind="codex", runner_labels=["self-hosted", "codex"]),
            AgentConfig(id="local", kind="command", command=["x"], runner_labels=["gpu"]),
        ],
    )


def test_outside_a_staged_job_every_agent_is_seated_where_it_runs():
    assert labels_here({}) is None
    assert labels_here({"MAGI_RUNNER_LABELS": "gpu"}) is None, "a runner's own labels alone"
    assert labels_here({"MAGI_JOB_LABELS": "  "}) is None


@pytest.mark.parametrize(
    ("job", "runner", "here"),
    [
        ('["self-hosted", "magi"]', "", {"self-hosted", "magi"}),
        ("self-hosted, magi", "", {"self-hosted", "magi"}),
        ('["self-hosted", "magi"]', "codex,gpu", {"self-hosted", "magi", "codex", "gpu"}),
        ('["self-hosted"]', '["gpu"]', {"self-hosted", "gpu"}),
    ],
)
def test_a_job_has_its_scheduled_labels_and_those_its_runner_declares(job, runner, here):
    env = {"MAGI_JOB_LABELS": job, "MAGI_RUNNER_LABELS": runner}
    assert labels_here(env) == frozenset(here)


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ('["a", 1]', "MAGI_JOB_LABELS is not a JSON list of labels"),
        ("[not json", "MAGI_JOB_LABELS is not a JSON list of labels"),
        ('{"a": 1}', "MAGI_JOB_LABELS: not runner labels"),
        ("gpu box", "MAGI_JOB_LABELS: not runner labels: 'gpu box'"),
    ],
)
def test_labels_that_are_not_labels_are_refused_naming_the_variable(bad, said):
    with pytest.raises(ConfigError, match=re.escape(said)):
        labels_here({"MAGI_JOB_LABELS": bad})
    with pytest.raises(ConfigError, match="MAGI_RUNNER_LABELS"):
        labels_here({"MAGI_JOB_LABELS": "magi", "MAGI_RUNNER_LABELS": bad})


def test_the_next_stage_is_the_first_wanted_in_the_rosters_order():
    """Never the order in which candidates asked: that order could tie a label to a seat."""
    config = _config()
    assert next_stage(config, [["gpu"], ["self-hosted", "codex"]]) == ["self-hosted", "codex"]
    assert next_stage(config, [["gpu"]]) == ["gpu"]
    assert next_stage(config, []) is None
    assert next_stage(config, [["elsewhere"]]) == ["elsewhere"]


def test_a_competition_starts_on_the_pool_and_a_council_where_all_can_run():
    config = _config()
    assert first_stage(config) == POOL
    assert job_labels(config) == ["self-hosted", "magi", "codex", "gpu"]


def test_a_forked_wave_groups_its_seats_by_labels_in_the_rosters_order():
    config = _config()
    seats = [("impl-A", "local"), ("impl-B", "claude"), ("impl-C", "codex"), ("impl-D", "claude")]
    assert fork_groups(config, seats) == [
        (POOL, ["impl-B", "impl-D"]),
        (["self-hosted", "codex"], ["impl-C"]),
        (["gpu"], ["impl-A"]),
    ]


def test_a_seat_job_knows_its_seats_and_nothing_else_does():
    assert stage_seats({}) is None
    assert stage_seats({"MAGI_STAGE_SEATS": '["impl-B"]'}) == frozenset({"impl-B"})
    with pytest.raises(ConfigError, match="MAGI_STAGE_SEATS"):
        stage_seats({"MAGI_STAGE_SEATS": "impl-B"})


def test_label_sets_are_the_same_whatever_their_order_and_case():
    """GitHub matches runner labels in no order and whatever the case: so does a fork."""
    config = Config(
        github=Github(runner_labels=POOL),
        agents=[
            AgentConfig(
                id="a", kind="command", command=["x"], runner_labels=["self-hosted", "gpu"]
            ),
            AgentConfig(
                id="b", kind="command", command=["x"], runner_labels=["GPU", "self-hosted"]
            ),
        ],
    )
    assert fork_groups(config, [("impl-A", "a"), ("impl-B", "b")]) == [
        (["self-hosted", "gpu"], ["impl-A", "impl-B"])
    ]
    here = labels_here({"MAGI_JOB_LABELS": '["Self-Hosted", "GPU"]'})
    assert here is not None
    assert has_labels(here, ["gpu", "self-hosted"])


def test_a_joins_seats_count_only_in_the_wave_it_joined():
    """A judge asked in a joined judge wave is asked in the vote all the same."""
    from magi.core.seats.runners import JOINED_SEATS, joined, joined_entry, joined_seats

    entries = [joined_entry("judge", 0, "judge-2"), joined_entry("judge", 0, "judge-1")]
    env = {JOINED_SEATS: joined(entries)}
    assert joined_seats(env, "judge") == {"judge-1", "judge-2"}
    assert joined_seats(env, "vote") == frozenset()
    assert joined_seats({}, "judge") == frozenset()
    # The next review round of the same pass is a wave of its own: its seats are asked;
    # the joins of a pass add up (a judge's judgement and, later, its deliberation turn).
    later = [
        *entries,
        joined_entry("review", 1, "review-1"),
        joined_entry("deliberate", 2, "judge-3"),
    ]
    rounds = {JOINED_SEATS: joined(later)}
    assert joined_seats(rounds, "review", 1) == {"review-1"}
    assert joined_seats(rounds, "review", 2) == frozenset()
    assert joined_seats(rounds, "deliberate", 2) == {"judge-3"}
    assert joined_seats(rounds, "judge") == {"judge-1", "judge-2"}


@pytest.mark.parametrize(
    "bad", ["judge-1", '{"node": "judge", "seats": ["x"]}', '["judge-1"]', '["judge:x:judge-1"]']
)
def test_a_joined_wave_that_does_not_read_is_refused_naming_the_variable(bad):
    from magi.core.seats.runners import JOINED_SEATS, joined_seats

    with pytest.raises(ConfigError, match=JOINED_SEATS):
        joined_seats({JOINED_SEATS: bad}, "judge")
