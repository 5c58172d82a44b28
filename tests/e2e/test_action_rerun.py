"""GitHub's "Re-run failed jobs" and "Re-run all jobs", as the jobs see them.

A re-run is the same workflow run (same ``GITHUB_RUN_ID``, ``GITHUB_RUN_ATTEMPT`` 2) whose
jobs start again on whatever runner takes them, with the inputs of the first attempt; a
re-run job's artifact replaces the first attempt's under the same name (``overwrite:
true``), and a fresh publish job downloads it. Here the agents job is killed mid-run (the
runner lost: no artifact), publish says so on the issue, and the re-run carries the run
on from its record to the pull request, asking no finished seat again; a second re-run of
every job changes nothing on GitHub.
"""

from __future__ import annotations

import shutil
import signal

import pytest

from action_helpers import ISSUE, REPO, World, make_world
from graph_helpers import seat_calls
from magi.state.store import Store
from magi.testing.action import WRITES


def _attempt(world: World, n: int, **env: str) -> tuple[int, str]:
    """The agents job of attempt ``n``: a fresh runner temp, the artifact written anew."""
    shutil.rmtree(world.artifact, ignore_errors=True)
    res = world.compete(env={"GITHUB_RUN_ATTEMPT": str(n), **env})
    return res.returncode, res.stdout + res.stderr


def _publish(world: World, monkeypatch: pytest.MonkeyPatch, n: int) -> int:
    monkeypatch.setenv("GITHUB_RUN_ATTEMPT", str(n))
    return world.publish(monkeypatch).exit_code


def test_a_killed_agents_job_re_run_carries_the_run_on_to_its_pull_request(tmp_path, monkeypatch):
    world = make_world(tmp_path)
    code, out = _attempt(world, 1, MAGI_FAILPOINT="node:judge:begun")
    assert code == -signal.SIGKILL, out
    assert not (world.artifact / "manifest.json").exists()
    assert _publish(world, monkeypatch, 1) != 0  # the job fails, and says why on the issue
    [said] = world.github.comments_on(REPO, ISSUE)
    assert "left no result" in said
    implemented = {k: n for k, n in seat_calls(world.scripted).items() if k[1] == "implement"}
    assert implemented, "the first attempt's implementers worked before the kill"

    code, out = _attempt(world, 2)  # "Re-run failed jobs": compete, then publish
    assert code == 0, out
    again = {k: n for k, n in seat_calls(world.scripted).items() if k[1] == "implement"}
    assert again == implemented, "no implementer is asked again on the re-run"
    assert _publish(world, monkeypatch, 2) == 0
    [pull] = world.github.world(REPO).pulls.values()
    thread = world.github.comments_on(REPO, ISSUE)
    assert len(thread) == 1, "the 'no result' comment became the tracking comment"
    assert "left no result" not in thread[0]
    assert f"Closes #{ISSUE}" in (pull.body or "")

    (run_id,) = Store(world.home).list_ids()
    asked = seat_calls(world.scripted)
    calls, refs = len(world.github.calls), world.remote_refs()
    code, out = _attempt(world, 3)  # "Re-run all jobs" of the finished run
    assert code == 0, out
    assert f"run {run_id}" in out
    assert seat_calls(world.scripted) == asked, "a finished run is only written out again"
    assert _publish(world, monkeypatch, 3) == 0
    again = world.github.calls[calls:]
    assert again, "it did look"
    assert [c.name for c in again if c.name in WRITES] == []
    assert world.remote_refs() == refs
    assert len(world.github.world(REPO).pulls) == 1
