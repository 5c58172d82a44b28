"""day_usd on a runner sums the repository's run records (refs/magi/runs/*), not one store."""

from __future__ import annotations

import subprocess
from datetime import timedelta
from pathlib import Path

import pytest

from budget_helpers import NOW, RUN_ID, budget_config, seat_context
from git_helpers import isolate, one_commit_repo, sh
from magi.action.publish_job.record_ref import Published, build_commit, record_ref
from magi.git.repo import Git
from magi.model.config import Config
from magi.model.run import ModelTokens, Run, RunStatus, Task, Turn, Usage
from magi.seats import Stop, check_budget
from magi.state.store import Store

ON_A_RUNNER = {"GITHUB_ACTIONS": "true"}


def _turn(usage: Usage, *, days_ago: int = 0) -> Turn:
    return Turn(
        seat="impl-A",
        node="implement",
        turn=1,
        agent="x",
        status="ok",
        started_at=NOW - timedelta(days=days_ago),
        duration_s=1.0,
        usage=usage,
    )


def _record(run_id: str, *turns: Turn, repo: str = "/elsewhere") -> Run:
    return Run(
        id=run_id,
        created_at=NOW,
        repo=repo,
        base="main",
        seed=1,
        task=Task(original="t", cleaned="t"),
        config=Config(),
        turns=list(turns),
    )


def _publish(origin: Path, run: Run) -> None:
    """What `magi action publish` leaves in the repository: a record commit under its ref."""
    git = Git(origin)
    text = run.model_dump_json(by_alias=True, indent=2) + "\n"
    sha = build_commit(
        git, run_json=text, artifacts={"x.md": "y"}, published=Published(), parent=None, message="m"
    )
    assert sha is not None
    git.run("update-ref", record_ref(run.id), sha)


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(the runner's checkout, the repository it was cloned from) with records published."""
    isolate(monkeypatch, tmp_path / "user")
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    repo = one_commit_repo(tmp_path / "checkout", {"README": "x"})
    sh(repo, "remote", "add", "origin", str(origin))
    sh(repo, "push", "-q", "origin", "main")
    # Another runner's run today: $1.25 reported, 400k tokens of gpt-5-codex (~$0.50).
    codex = Usage(input_tokens=400_000, models={"gpt-5-codex": ModelTokens(input=400_000)})
    _publish(origin, _record("20261129-090000-1111", _turn(Usage(cost_usd=1.25)), _turn(codex)))
    # Begun yesterday: only its turn of today counts.
    late = _record(
        "20261128-230000-2222",
        _turn(Usage(cost_usd=50.0), days_ago=1),
        _turn(Usage(cost_usd=0.25)),
    )
    _publish(origin, late)
    _publish(origin, _record("20261126-100000-3333", _turn(Usage(cost_usd=100.0))))  # long ago
    _publish(origin, _record(RUN_ID, _turn(Usage(cost_usd=30.0))))  # this run's last publish
    sh(origin, "update-ref", "refs/magi/runs/not-a-run", "refs/heads/main")
    return repo, origin


def test_on_a_runner_day_usd_sums_the_repositorys_records_of_today(
    tmp_path: Path, checkout: tuple[Path, Path]
) -> None:
    """Other runners' runs count (each at its own prices); this run counts once, from itself."""
    repo, _ = checkout
    cfg = budget_config([], day_usd=2.0)
    sctx = seat_context(tmp_path / "home", cfg, {}, repo=repo, environ=ON_A_RUNNER)
    with pytest.raises(Stop) as held:
        check_budget(sctx)
    assert held.value.status is RunStatus.HELD
    assert held.value.reason == (
        "budget: ~$2.00 ($0.50 est.) spent today against the $2.00 daily cap"
    )
    assert sh(repo, "for-each-ref", "refs/magi/") == "", "nothing is fetched into the checkout"


def test_off_a_runner_day_usd_counts_this_machines_store_only(
    tmp_path: Path, checkout: tuple[Path, Path]
) -> None:
    """`magi run` keeps summing its own store: the repository's records are not read."""
    repo, _ = checkout
    cfg = budget_config([], day_usd=2.0)
    sctx = seat_context(tmp_path / "home", cfg, {}, repo=repo, environ={})
    check_budget(sctx)
    assert not (tmp_path / "home" / "records.git").exists()


def test_this_runners_own_copy_of_a_run_wins_over_its_published_one(
    tmp_path: Path, checkout: tuple[Path, Path]
) -> None:
    """A run this runner holds is counted as its store has it (at least as new as the ref)."""
    repo, _ = checkout
    home = tmp_path / "home"
    mine = _record("20261129-090000-1111", _turn(Usage(cost_usd=9.0)), repo=str(repo))
    Store(home).create(mine)
    # Another repository's run on the same (shared) runner: not this repository's spend.
    Store(home).create(_record("20261129-100000-5555", _turn(Usage(cost_usd=50.0))))
    cfg = budget_config([], day_usd=9.2)
    sctx = seat_context(home, cfg, {}, repo=repo, environ=ON_A_RUNNER)
    with pytest.raises(Stop, match=r"\$9\.25 spent today"):  # 9.00 here + 0.25 yesterday's
        check_budget(sctx)


def test_records_that_cannot_be_read_leave_a_warning_and_this_runners_count(
    tmp_path: Path, checkout: tuple[Path, Path]
) -> None:
    """No access to the repository (a private one, no token): said, not a traceback."""
    repo, _ = checkout
    sh(repo, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    cfg = budget_config([], day_usd=2.0)
    sctx = seat_context(tmp_path / "home", cfg, {}, repo=repo, environ=ON_A_RUNNER)
    check_budget(sctx)
    said = [e for e in sctx.record.events if e.node == "budget"]
    assert [e.level for e in said] == ["warn"]
    assert said[0].message.startswith(
        "[budget] day_usd counts only this runner's runs today: the repository's run records "
        "(refs/magi/runs/*) could not be read ("
    )


def _records_step(tmp_path: Path, origin: Path, run_id: str = "") -> tuple[str, Path]:
    """The compete job's records step, run as the workflow has it against a file:// origin:
    its stdout, and the bare repository it fetched into."""
    import os
    import stat

    import yaml

    from magi.config.workflow import template

    steps = yaml.safe_load(template())["jobs"]["compete"]["steps"]
    (step,) = [s for s in steps if "day_usd" in s.get("name", "")]
    assert step["env"] == {"GH_TOKEN": "${{ github.token }}", "RUN_ID": "${{ inputs.run_id }}"}
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir(exist_ok=True)
    day = NOW.strftime("%Y%m%d")
    before = (NOW - timedelta(days=1)).strftime("%Y%m%d")
    # The step asks the runner's Python for today and yesterday (UTC): the test's own days.
    clock = fake_bin / "python3"
    clock.write_text(f"#!/bin/sh\necho {day} {before}\n")
    clock.chmod(clock.stat().st_mode | stat.S_IEXEC)
    temp = tmp_path / "runner-temp"
    temp.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "PATH": f"{fake_bin}:{os.environ['PATH']}",
        "RUNNER_TEMP": str(temp),
        "GH_TOKEN": "ghs_notarealtoken",
        "GITHUB_SERVER_URL": f"file://{origin.parent}",
        "GITHUB_REPOSITORY": origin.name,
        "RUN_ID": run_id,
    }
    done = subprocess.run(["bash", "-c", step["run"]], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout, temp / "magi-records.git"


def test_a_private_repository_is_read_from_what_the_workflow_step_fetched(
    tmp_path: Path, checkout: tuple[Path, Path]
) -> None:
    """No anonymous fetch (a private repository): the workflow's step before compete fetches
    the day's records with the job's read token into a bare repository, and the budget reads
    that. The step is run here as the workflow has it, against a file:// origin."""
    import re

    repo, origin = checkout
    sh(repo, "remote", "set-url", "origin", str(tmp_path / "gone.git"))  # no anonymous read
    out, fetched = _records_step(tmp_path, origin)
    assert "::warning::" not in out
    day, before = NOW.strftime("%Y%m%d"), (NOW - timedelta(days=1)).strftime("%Y%m%d")
    refs = sh(fetched, "for-each-ref", "--format=%(refname)", "refs/magi/runs/")
    assert re.findall(r"\d{8}", refs)
    assert all(d in (day, before) for d in re.findall(r"/(\d{8})-", refs))
    cfg = budget_config([], day_usd=2.0)
    on_runner = {**ON_A_RUNNER, "MAGI_RUN_RECORDS": str(fetched)}
    sctx = seat_context(tmp_path / "home", cfg, {}, repo=repo, environ=on_runner)
    with pytest.raises(Stop) as held:
        check_budget(sctx)
    assert held.value.reason == (
        "budget: ~$2.00 ($0.50 est.) spent today against the $2.00 daily cap"
    )


def test_the_records_step_fetches_a_retried_runs_record_whatever_its_day(
    tmp_path: Path, checkout: tuple[Path, Path]
) -> None:
    """/magi retry of a run begun days ago: its record is fetched beside the day's, so a
    runner that never saw it can carry it on (magi.action.agents_job.adopt)."""
    _, origin = checkout
    out, fetched = _records_step(tmp_path, origin, "20261126-100000-3333")
    assert "::warning::" not in out
    refs = sh(fetched, "for-each-ref", "--format=%(refname)", "refs/magi/runs/").split()
    assert "refs/magi/runs/20261126-100000-3333" in refs


@pytest.mark.parametrize(
    ("run_id", "warned"),
    [("20261201-120000-beef", False), ("x\n::add-mask::y", True), ("../../heads/main", True)],
)
def test_a_run_id_without_a_record_or_not_an_id_fetches_the_days_records_still(
    tmp_path: Path, checkout: tuple[Path, Path], run_id: str, warned: bool
) -> None:
    """A new run (the App names it before it has a record) is no warning; an input that is
    not a run id is one, and is never echoed into the log's workflow commands."""
    _, origin = checkout
    out, fetched = _records_step(tmp_path, origin, run_id)
    assert ("::warning::" in out) is warned
    assert "add-mask" not in out
    refs = sh(fetched, "for-each-ref", "--format=%(refname)", "refs/magi/").split()
    assert refs
    assert all(r.startswith("refs/magi/runs/2026112") for r in refs), refs
