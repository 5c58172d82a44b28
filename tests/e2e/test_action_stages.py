"""One competition across two runners: each seat where its agent's CLI is logged in.

The roster's second implementer is logged in only on a runner labelled ``gpu`` (its CLI is
on that runner's PATH alone); everything else runs on the pool's ``self-hosted, magi``.
The competition starts on the pool's labels, hands the run to the ``gpu`` runner for that
seat, which hands it back for the judges; each hand-off is publish dispatching the
workflow again with the next stage's labels. Each runner is its own checkout and
``MAGI_HOME``; only origin and the GitHub double (record ref, dispatches) are shared, and
both runners hold the pool's runner key (the run travels sealed before its tally).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from action_helpers import IMPLEMENTERS, REPO, World, competed_world, make_world, records_step
from github_helpers import SEAL
from graph_helpers import seat_calls
from magi.action.seal import KEY_FILE, SEALED, new_key, open_sealed, panel_key, parse_sealed
from magi.core.person.park import channel
from magi.errors import ActionError
from magi.git.repo import Git
from magi.github.port import GitHubError
from magi.model.run import Run, RunStatus
from magi.report.before_tally import HIDDEN
from magi.state.runner_key import PANEL_FILE, write_panel
from magi.state.store import Store
from record_helpers import run as fixture_run

POOL = ["self-hosted", "magi"]
GPU = ["self-hosted", "gpu"]
JUDGES = ["self-hosted", "judges"]


def _run_id(world: World) -> str:
    out = (world.tmp / "runner-temp-compete" / "output").read_text()
    found = re.findall(r"^run-id=(\S+)$", out, re.M)
    assert found, out
    return found[-1]


def _gpu_roster(world: World, *on_gpu: str) -> None:
    """The second implementer (or those named): `gpu-agent` (on the gpu runner's PATH
    only), with its labels."""
    _roster_on(world, GPU, "gpu-agent", *(on_gpu or IMPLEMENTERS[1:]))


def _roster_on(world: World, labels: list[str], command: str, *agents: str) -> None:
    """``agents`` logged in on the runner of ``labels`` only: run as ``command`` (on that
    runner's PATH alone), acting as the persona they had."""
    config = world.repo / "magi.toml"
    text = config.read_text()
    for agent in agents:
        block = re.search(r'\[\[agents\]\]\nid = "' + agent + r'"\n.*?\n(?=\n|\[)', text, re.S)
        assert block, text
        persona = re.search(r'command = \[.*"(\w+)"\]', block.group(0))
        assert persona, block.group(0)
        moved = re.sub(
            r"command = \[.*\]", f'command = ["{command}", "{persona.group(1)}"]', block.group(0)
        )
        moved += f"runner_labels = {json.dumps(labels)}\n"
        text = text.replace(block.group(0), moved)
    config.write_text(text)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "commit", "-qam", f"agents on {labels}"], cwd=world.repo, check=True)
    subprocess.run(["git", "push", "-q", "origin", "main"], cwd=world.repo, check=True)


def _gpu_runner(world: World) -> World:
    """The second runner: its own clone and home, the pool's key, `gpu-agent` on its PATH."""
    return _runner(world, "gpu", "gpu-agent")


def _runner(world: World, name: str, command: str) -> World:
    """Another runner: its own clone and home, the pool's key, ``command`` on its PATH
    (logging each call to ``<name>-calls`` in the scripted folder)."""
    tmp = world.tmp / f"runner-{name}"
    tmp.mkdir()
    checkout = tmp / "checkout"
    subprocess.run(["git", "clone", "-q", str(world.remote), str(checkout)], check=True)
    bindir = tmp / "bin"
    bindir.mkdir()
    spy = world.scripted / "spy.py"
    (bindir / command).write_text(
        f'#!/bin/sh\necho "$MAGI_SEAT $MAGI_NODE" >> "{world.scripted}/{name}-calls"\n'
        f'exec "{sys.executable}" "{spy}" "$@"\n'
    )
    (bindir / command).chmod(0o755)
    (tmp / "magi-home").mkdir()
    key = world.home / KEY_FILE
    (tmp / "magi-home" / KEY_FILE).write_bytes(key.read_bytes())
    (tmp / "magi-home" / KEY_FILE).chmod(0o600)
    return World(tmp, checkout, world.remote, world.scripted, world.github)


def _stage(world: World, labels: list[str], *extra: str, path: str = "") -> tuple[int, str]:
    """One stage's agents job on ``world``'s runner, its checkout fetched afresh from
    origin as actions/checkout (fetch-depth 0) does at the start of every job."""
    subprocess.run(["git", "-C", str(world.repo), "fetch", "-q", "origin"], check=True)
    env = {"MAGI_JOB_LABELS": json.dumps(labels)}
    env["MAGI_RUN_RECORDS"] = str(records_step(world, world.tmp / "magi-records.git"))
    if path:
        env["PATH"] = path
    res = world.compete(*extra, env=env)
    return res.returncode, res.stdout + res.stderr


def _naming(log: str) -> list[str]:
    """The job log's lines that name a candidate or an implementer seat by its label."""
    return [ln for ln in log.splitlines() if re.search(r"\bimpl-[A-Z]\b|[Cc]andidate [A-Z]\b", ln)]


def _dispatched(world: World) -> list[dict[str, str]]:
    return [d["inputs"] for d in world.github.world(REPO).dispatches]


@pytest.fixture(scope="module")
def one_runner(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """The same roster on one runner that holds every login: the reference outcome."""
    world, _ = competed_world(tmp_path_factory.mktemp("one-runner"))
    return Store(world.home)


def test_a_competition_goes_from_runner_to_runner_by_its_agents_labels(
    tmp_path, monkeypatch, one_runner
) -> None:
    world = make_world(tmp_path)
    _gpu_roster(world)
    new_key(world.home)
    gpu = _gpu_runner(world)
    gpu_path = f"{gpu.tmp / 'bin'}:{os.environ['PATH']}"

    # Stage 1, on the pool: prep, then the wave needs two runners' logins: it is forked.
    # `gpu-agent` is not on this runner's PATH, and need not be.
    code, out = _stage(world, POOL)
    assert code == 0, out
    run_id = _run_id(world)
    first = Store(world.home).load_run(run_id)
    assert first.status is RunStatus.HANDED_OFF, first.reason
    assert first.fork == [POOL, GPU]
    assert "the wave goes to 2 runners at once" in out
    assert not _naming(out), "a staged job's public log names no candidate"
    assert not seat_calls(world.scripted), "no seat is asked by the job that forks"
    assert world.publish(monkeypatch, run_id).exit_code == 0
    forks = _dispatched(world)
    base = {"issue": "7", "run_id": run_id, "command": "compete", "stage": "fork"}
    assert forks == [
        {**base, "runner-labels": json.dumps(POOL)},
        {**base, "runner-labels": json.dumps(GPU)},
    ]
    # What anyone can read between the stages: no candidate shows how far it got.
    public = json.loads(
        subprocess.run(
            ["git", "-C", str(world.remote), "show", f"refs/magi/runs/{run_id}:run.json"],
            capture_output=True, text=True, check=True,
        ).stdout
    )  # fmt: skip
    assert {c["status"] for c in public["candidates"]} == {"pending"}
    assert not [t for t in public["turns"] if t["seat"].startswith("impl-")]
    assert public["seed"] == 0

    # The seat jobs, side by side, each on its own runner, each asking its own seat only.
    with ThreadPoolExecutor(2) as pool:
        jobs = [
            pool.submit(_stage, world, POOL, "--run-id", run_id, "--fork"),
            pool.submit(_stage, gpu, GPU, "--run-id", run_id, "--fork", path=gpu_path),
        ]
        results = [j.result() for j in jobs]
    for code, out in results:
        assert code == 0, out
        assert not _naming(out), "which candidate a seat job worked on is not said"
    for runner in (world, gpu):  # which seat has a prompt would say which the job asked
        assert not list((runner.artifact / "artifacts").glob("*")), "no prompt goes out"
        # Each seat job worked in a copy of its own, whose clones go once its result is
        # sealed (a runner serving many runs would pile them up); the copy's record stays.
        copy = Store(runner.home, runs="forks").load_run(run_id)
        assert copy.worktree_root
        assert "forks" in copy.worktree_root
        assert not Path(copy.worktree_root).exists()
    on_gpu = (world.scripted / "gpu-calls").read_text().split()
    assert on_gpu[1::2] == ["implement"], on_gpu
    assert [n for (_, node), n in seat_calls(world.scripted).items()] == [1, 1]
    for runner in (gpu, world):  # whichever stores last completes the wave
        assert runner.publish(monkeypatch, run_id).exit_code == 0
    stored = subprocess.run(
        ["git", "-C", str(world.remote), "ls-tree", "--name-only", f"refs/magi/runs/{run_id}:fork"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert stored == ["joined", "self-hosted+gpu.sealed", "self-hosted+magi.sealed"]
    join = {"issue": "7", "run_id": run_id, "command": "compete"}
    join["runner-labels"] = json.dumps(POOL)
    assert _dispatched(world)[2:] == [join], "one join, from the last store"

    # On from there: each stage where publish dispatched it, until the run ends. The join,
    # on the pool, takes in both seat jobs' work, verifies, judges and tallies; after the
    # tally the review round's two seats (one the gpu agent's) fork the same way, and the
    # join on the pool ends the run.
    done = _drive(world, gpu, run_id, monkeypatch, gpu_path, 2)
    assert done.status is RunStatus.READY, done.reason
    sent = [(d.get("stage"), json.loads(d["runner-labels"])) for d in _dispatched(world)]
    assert sent[3:] == [("fork", POOL), ("fork", GPU), (None, POOL)], sent
    assert len(world.github.world(REPO).pulls) == 1
    assert done.review is not None
    assert [s.status for s in done.review.rounds[0].seats] == ["ok", "ok"]

    # Every seat asked once at implement, wherever it ran; the winner is the one-runner
    # run's winner (the same agent: the seed differs, the election does not).
    asked = seat_calls(world.scripted)
    assert [n for (s, node), n in asked.items() if node == "implement"] == [1, 1]
    assert (world.scripted / "gpu-calls").read_text().count("implement") == 1
    (ref_id,) = one_runner.list_ids()
    reference = one_runner.load_run(ref_id)
    assert reference.tally is not None
    assert done.tally is not None
    assert done.author(done.tally.winner) == reference.author(reference.tally.winner)
    assert done.tally.winner is not None


def _handed_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[World, str]:
    world = make_world(tmp_path)
    _gpu_roster(world)
    new_key(world.home)
    code, out = _stage(world, POOL)
    assert code == 0, out
    run_id = _run_id(world)
    assert world.publish(monkeypatch, run_id).exit_code == 0
    return world, run_id


def test_a_publish_re_run_does_not_dispatch_the_next_stage_twice(tmp_path, monkeypatch):
    world, run_id = _handed_off(tmp_path, monkeypatch)
    assert len(_dispatched(world)) == 2  # the fork's two seat jobs
    assert world.publish(monkeypatch, run_id).exit_code == 0  # "Re-run jobs"
    assert len(_dispatched(world)) == 2


def test_a_failed_dispatch_is_dispatched_by_the_publish_re_run(tmp_path, monkeypatch):
    """GitHub refused the dispatch: publish fails saying so and records no dispatch, so its
    re-run dispatches the stage."""
    world = make_world(tmp_path)
    _gpu_roster(world)
    new_key(world.home)
    assert _stage(world, POOL)[0] == 0
    run_id = _run_id(world)
    refused = GitHubError("Workflow does not have 'workflow_dispatch' trigger", status=422)
    world.github.fail("dispatch_workflow", refused)
    assert world.publish(monkeypatch, run_id).exit_code != 0
    assert _dispatched(world) == []
    assert world.publish(monkeypatch, run_id).exit_code == 0
    assert len(_dispatched(world)) == 2


def test_a_stage_dispatched_for_the_labels_it_has_must_seat_someone(tmp_path):
    """The guard against handing a run back and forth: a job whose labels cover what the
    run waits for, that asked nobody, fails saying so; a re-run of the stage that handed
    the run off (other labels) asks nobody and is no error."""
    from magi.action.agents_job.compete import _handing_off
    from magi.errors import ActionError

    run = fixture_run("20261203-120000-abcd", status=RunStatus.HANDED_OFF, handoff=[GPU])
    out = tmp_path / "out"
    out.mkdir()
    (out / "sealed.txt").write_text("sealed")
    came = (RunStatus.HANDED_OFF, [GPU], len(run.turns), run.fork_id)
    with pytest.raises(ActionError, match="could seat nobody: it still waits for a runner"):
        _handing_off(run, came, out, {"MAGI_JOB_LABELS": json.dumps(GPU)})
    _handing_off(run, came, out, {"MAGI_JOB_LABELS": json.dumps(POOL)})  # a re-run


def test_a_seat_job_on_other_labels_says_so(tmp_path, monkeypatch):
    world, run_id = _handed_off(tmp_path, monkeypatch)
    code, out = _stage(world, ["self-hosted", "other"], "--run-id", run_id, "--fork")
    assert code != 0
    assert "and this job runs on ['other', 'self-hosted']" in out


def test_a_retry_before_every_seat_job_stored_takes_what_is_stored_and_asks_the_rest(
    tmp_path, monkeypatch
):
    """The pool's seat job was cancelled before it stored anything (`/magi stop`), the
    gpu's stored its result: `/magi retry` joins what is there and asks the pool's seat
    itself, on the pool, and the run goes on; the gpu seat is not asked again."""
    world, run_id = _handed_off(tmp_path, monkeypatch)
    gpu = _gpu_runner(world)
    path = f"{gpu.tmp / 'bin'}:{os.environ['PATH']}"
    assert _stage(gpu, GPU, "--run-id", run_id, "--fork", path=path)[0] == 0
    assert gpu.publish(monkeypatch, run_id).exit_code == 0
    code, out = _stage(world, POOL, "--run-id", run_id)  # the retry's compete
    assert code == 0, out
    assert "the seat job of self-hosted, magi stored nothing: its seats are asked again" in out
    run = Store(world.home).load_run(run_id)
    assert run.tally is not None, run.reason
    assert [n for (_, node), n in seat_calls(world.scripted).items() if node == "implement"] == [
        1,
        1,
    ]
    # The same job forked the review round: the implement wave's stored result (a retry's
    # join marks nothing) is no part of the new fork, and a late re-publish of that seat
    # job's result is not stored into it.
    assert (run.fork, run.fork_node) == ([POOL, GPU], "review")
    assert world.publish(monkeypatch, run_id).exit_code == 0
    assert _stored(world, run_id) == [], "the earlier fork's result is gone"
    late = gpu.publish(monkeypatch, run_id)
    assert late.exit_code == 0
    assert "an earlier fork's" in late.output
    assert _stored(world, run_id) == []
    done = _drive(world, gpu, run_id, monkeypatch, path, len(_dispatched(world)) - 2)
    assert done.status is RunStatus.READY, done.reason


def test_re_running_the_stage_that_handed_off_is_no_error(tmp_path, monkeypatch):
    """Every implementer on the gpu box: stage one hands the run to the gpu labels. GitHub's
    "Re-run all jobs" of that workflow run asks nobody on the pool, which is no stuck stage:
    it writes the same state out, and its publish dispatches nothing again."""
    world = make_world(tmp_path)
    _gpu_roster(world, *IMPLEMENTERS)
    new_key(world.home)
    assert _stage(world, POOL)[0] == 0
    run_id = _run_id(world)
    assert world.publish(monkeypatch, run_id).exit_code == 0
    code, out = _stage(world, POOL, "--run-id", run_id)
    assert code == 0, out
    assert Store(world.home).load_run(run_id).status is RunStatus.HANDED_OFF
    assert world.publish(monkeypatch, run_id).exit_code == 0
    assert len(_dispatched(world)) == 1


def test_without_the_pools_key_a_run_is_not_handed_off_before_its_tally(tmp_path, monkeypatch):
    """No key: the run cannot travel sealed, so the job fails naming the file, and the
    issue is told why (nothing unsealed ever leaves the runner)."""
    world = make_world(tmp_path)
    _gpu_roster(world)
    code, out = _stage(world, POOL)
    assert code != 0
    assert "waits for a runner labelled self-hosted, magi; self-hosted, gpu" in out
    assert KEY_FILE in out
    assert world.publish(monkeypatch).exit_code != 0
    assert "runner key" in world.github.comments_on(REPO, 7)[-1]
    assert _dispatched(world) == []


def test_a_stage_killed_in_its_seats_turn_is_carried_on_by_its_re_run(tmp_path, monkeypatch):
    """The gpu seat job is killed right after its seat's turn was recorded (the runner lost):
    GitHub's re-run of that job on the same runner goes on from its own copy, which is
    ahead of the record ref, and asks that seat nothing again."""
    world, run_id = _handed_off(tmp_path, monkeypatch)
    gpu = _gpu_runner(world)
    path = f"{gpu.tmp / 'bin'}:{os.environ['PATH']}"
    record = Store(world.home).load_run(run_id)
    seat = next(name for name, s in record.seats.items() if s.agent == IMPLEMENTERS[1])
    env_kill = {"MAGI_FAILPOINT": f"turn:{seat}:implement"}
    res = gpu.compete(
        "--run-id",
        run_id,
        "--fork",
        env={
            "MAGI_JOB_LABELS": json.dumps(GPU),
            "MAGI_RUN_RECORDS": str(records_step(gpu, gpu.tmp / "magi-records.git")),
            "PATH": path,
            **env_kill,
        },
    )
    assert res.returncode == -9, res.stdout + res.stderr
    asked = (world.scripted / "gpu-calls").read_text().count("implement")
    code, out = _stage(gpu, GPU, "--run-id", run_id, "--fork", path=path)  # "Re-run failed jobs"
    assert code == 0, out
    assert (world.scripted / "gpu-calls").read_text().count("implement") == asked
    done = Store(gpu.home, runs="forks").load_run(run_id)  # the seat job's own copy
    assert done.candidate(seat.removeprefix("impl-")).status == "ok"
    assert (gpu.artifact / "fork.sealed").is_file()


def test_a_seat_jobs_result_speaks_only_for_its_own_seats(tmp_path, monkeypatch):
    """The gpu seat job's sealed result: it opens only as a fork (never as a whole run),
    and only as the gpu group's; absorbed as the pool's, it is refused."""
    from magi.action.agents_job.fork import StaleFork, absorb
    from magi.action.seal import load_key, open_sealed, parse_sealed
    from magi.errors import ActionError

    world, run_id = _handed_off(tmp_path, monkeypatch)
    gpu = _gpu_runner(world)
    path = f"{gpu.tmp / 'bin'}:{os.environ['PATH']}"
    assert _stage(gpu, GPU, "--run-id", run_id, "--fork", path=path)[0] == 0
    text = (gpu.artifact / "fork.sealed").read_text()
    record = Store(world.home).load_run(run_id)
    key = load_key(world.home)
    assert key is not None
    where = {"run_id": run_id, "issue": 7, "base": record.base_sha or "", "where": "t"}
    sealed = parse_sealed(text, "t")
    with pytest.raises(ActionError, match="does not open"):
        open_sealed(key, sealed, **where)  # as a whole run
    members = open_sealed(key, sealed, kind="fork", **where)
    with pytest.raises(ActionError, match="not the result of the seats of self-hosted, magi"):
        absorb(record, members, POOL, Store(world.home), Git.discover(world.repo), "t")
    # Nor as another wave's result, nor with answers its wave does not ask for.
    body = json.loads(members["fork.json"])
    earlier = {**members, "fork.json": json.dumps({**body, "fork_id": "0" * 12}).encode()}
    with pytest.raises(StaleFork, match="an earlier fork of this run"):
        absorb(record, earlier, GPU, Store(world.home), Git.discover(world.repo), "t")
    elsewhere = {**members, "fork.json": json.dumps({**body, "node": "judge"}).encode()}
    with pytest.raises(ActionError, match="not a result of the implement wave"):
        absorb(record, elsewhere, GPU, Store(world.home), Git.discover(world.repo), "t")
    body["votes"] = [{"seat": body["seats"][0], "status": "ok", "vote": "A"}]
    forged = {**members, "fork.json": json.dumps(body).encode()}
    with pytest.raises(ActionError, match="answers of a wave other than implement"):
        absorb(record, forged, GPU, Store(world.home), Git.discover(world.repo), "t")
    settled = absorb(record, members, GPU, Store(world.home), Git.discover(world.repo), "t")
    assert len(settled) == 1


def test_re_runs_of_the_forks_publishes_lose_no_result_and_send_one_join(tmp_path, monkeypatch):
    """The gpu seat job stores its result; the forking publish is re-run (its record
    rebuilt); the pool seat job's publish fails to dispatch the join, and its re-run sends
    it; re-runs after that send no other."""
    world, run_id = _handed_off(tmp_path, monkeypatch)
    stage_one = world.tmp / "stage-one-artifact"
    shutil.copytree(world.artifact, stage_one)
    gpu = _gpu_runner(world)
    path = f"{gpu.tmp / 'bin'}:{os.environ['PATH']}"
    assert _stage(gpu, GPU, "--run-id", run_id, "--fork", path=path)[0] == 0
    assert gpu.publish(monkeypatch, run_id).exit_code == 0
    shutil.rmtree(world.artifact)
    shutil.copytree(stage_one, world.artifact)
    assert world.publish(monkeypatch, run_id).exit_code == 0  # the forking publish, again
    assert _stored(world, run_id) == ["self-hosted+gpu.sealed"], "the gpu result stays"
    assert len(_dispatched(world)) == 2, "and the seat jobs are not sent again"
    assert _stage(world, POOL, "--run-id", run_id, "--fork")[0] == 0
    refused = GitHubError("Server Error", status=500)
    world.github.fail("dispatch_workflow", refused)
    assert world.publish(monkeypatch, run_id).exit_code != 0
    assert len(_dispatched(world)) == 2
    assert world.publish(monkeypatch, run_id).exit_code == 0  # "Re-run jobs"
    assert len(_dispatched(world)) == 3
    assert "stage" not in _dispatched(world)[-1], "the join is the competition's own stage"
    assert gpu.publish(monkeypatch, run_id).exit_code == 0
    assert _stage(gpu, GPU, "--run-id", run_id, "--fork", path=path)[0] == 0  # sealed anew
    assert gpu.publish(monkeypatch, run_id).exit_code == 0
    assert len(_dispatched(world)) == 3, "one join"


def _stored(world: World, run_id: str) -> list[str]:
    return subprocess.run(
        ["git", "-C", str(world.remote), "ls-tree", "--name-only", f"refs/magi/runs/{run_id}:fork"],
        capture_output=True, text=True, check=False,
    ).stdout.split()  # fmt: skip


def test_publish_dispatches_only_labels_and_a_workflow_the_repositorys_config_names(
    tmp_path, monkeypatch
):
    """The artifact comes from the job where agents ran: a fork it names on labels no agent
    of the default branch's config has, or another workflow, is not what publish sends."""
    world = make_world(tmp_path)
    _gpu_roster(world)
    new_key(world.home)
    assert _stage(world, POOL)[0] == 0
    record = json.loads((world.artifact / "run.json").read_text())
    record["fork"] = [POOL, ["self-hosted", "someone-elses-box"]]
    record["config"]["github"]["workflow"] = "deploy.yml"
    (world.artifact / "run.json").write_text(json.dumps(record))
    res = world.publish(monkeypatch, _run_id(world))
    assert res.exit_code != 0
    assert "no agent of the config has" in res.output
    assert _dispatched(world) == []


def test_the_next_stages_are_dispatched_with_the_runs_park_channel(tmp_path, monkeypatch):
    """A writer's `/magi stop` reaches every stage: publish hands on the channel the run was
    dispatched with (this run's, under the App's key), and a stage keeps the park request
    (publish withdraws it only once the run is no longer handed off)."""
    world = make_world(tmp_path)
    _gpu_roster(world)
    new_key(world.home)
    assert _stage(world, POOL)[0] == 0
    run_id = _run_id(world)
    park = channel("https://magi.example.com", SEAL, REPO.full_name, run_id).to_input()
    world.github.world(REPO).refs[f"magi/park/{run_id}"] = "1" * 40
    monkeypatch.setenv("MAGI_PARK", park)
    assert world.publish(monkeypatch, run_id).exit_code == 0
    sent = _dispatched(world)
    assert len(sent) == 2
    assert [d["park"] for d in sent] == [park, park]
    assert f"magi/park/{run_id}" in world.github.world(REPO).refs, "the next stage parks"


def _held(runner: World, run_id: str) -> Run:
    """The run as ``runner``'s last stage left it: its whole record, or a seat job's copy
    (``$MAGI_HOME/forks``, or the panel a judges' seat job works from, ``panels``),
    whichever it wrote last."""
    stores = [Store(runner.home, runs=runs) for runs in ("runs", "panels", "forks")]
    held = [s for s in stores if run_id in s.list_ids()]
    assert held, f"{runner.home} holds no copy of {run_id}"
    newest = max(held, key=lambda s: (s.run_dir(run_id) / "run.json").stat().st_mtime_ns)
    return newest.load_run(run_id)


def _drive(world: World, gpu: World, run_id: str, monkeypatch, gpu_path: str, seen: int) -> Run:
    """Every stage publish dispatched from the ``seen``-th dispatch on, in order, each on
    the runner its labels name (a fork's seat jobs one after the other), until the run
    ends; the run as the last stage left it."""
    return _drive_on(world, {json.dumps(GPU): (gpu, gpu_path)}, run_id, monkeypatch, seen)


def _drive_on(
    world: World, others: dict[str, tuple[World, str]], run_id: str, monkeypatch, seen: int
) -> Run:
    """``_drive`` with any runners besides the pool: by their labels (as JSON), each runner
    and its PATH."""
    done = None
    for _ in range(30):
        sent = _dispatched(world)
        if seen >= len(sent):
            break
        inputs = sent[seen]
        seen += 1
        labels = json.loads(inputs["runner-labels"])
        runner, path = others.get(json.dumps(labels), (world, ""))
        extra = ["--run-id", run_id, *(["--fork"] if inputs.get("stage") == "fork" else [])]
        code, out = _stage(runner, labels, *extra, path=path)
        assert code == 0, out
        assert not _naming(out), "a staged job's public log names no candidate"
        done = _held(runner, run_id)
        assert runner.publish(monkeypatch, run_id).exit_code == 0
    assert done is not None
    return done


def test_the_judges_wave_and_the_vote_are_forked_when_a_judge_sits_elsewhere(
    tmp_path, monkeypatch, one_runner
) -> None:
    """One judge's agent is logged in on the gpu runner only: the judges' first judgement
    and the vote each go to both runners at once (a seat job each, then one join), every
    judge asked once per wave, and the election is the one a single runner holds."""
    world = make_world(tmp_path)
    _gpu_roster(world, "jurorthree")
    new_key(world.home)
    gpu = _gpu_runner(world)
    gpu_path = f"{gpu.tmp / 'bin'}:{os.environ['PATH']}"

    code, out = _stage(world, POOL)  # prep, implement and verify on the pool; then the fork
    assert code == 0, out
    run_id = _run_id(world)
    first = Store(world.home).load_run(run_id)
    assert first.status is RunStatus.HANDED_OFF, first.reason
    assert (first.fork, first.fork_node) == ([POOL, GPU], "judge")
    assert not first.judgements, "the job that forks asks no judge"
    assert world.publish(monkeypatch, run_id).exit_code == 0
    assert [d.get("stage") for d in _dispatched(world)] == ["fork", "fork"]

    done = _drive(world, gpu, run_id, monkeypatch, gpu_path, 0)
    assert done.status is RunStatus.READY, done.reason
    # The judges' wave forked and joined, then the vote's: two seat jobs and a join each.
    fork, join = ("fork", json.dumps(POOL)), (None, json.dumps(POOL))
    sent = [(d.get("stage"), d["runner-labels"]) for d in _dispatched(world)]
    assert sent == [fork, ("fork", json.dumps(GPU)), join] * 2, sent
    asked = seat_calls(world.scripted)
    judged = {s: n for (s, node), n in asked.items() if node == "judge"}
    assert judged == {"judge-1": 1, "judge-2": 1, "judge-3": 1}, asked
    assert all(n == 1 for (_, node), n in asked.items() if node == "vote"), asked
    on_gpu = (world.scripted / "gpu-calls").read_text().split()
    assert set(on_gpu[0::2]) == {"judge-3"}, "only its seat ran on the gpu runner"
    assert on_gpu[1::2] == ["judge", "vote"], on_gpu
    assert [j.seat for j in done.judgements] == ["judge-1", "judge-2", "judge-3"]
    assert all(j.status == "ok" for j in done.judgements)
    (ref_id,) = one_runner.list_ids()
    reference = one_runner.load_run(ref_id)
    assert done.tally is not None
    assert reference.tally is not None
    assert done.author(done.tally.winner) == reference.author(reference.tally.winner)


def _judges_runner(world: World, name: str = "gpu", command: str = "gpu-agent") -> World:
    """A runner that only seats judges (the gpu runner unless named): the pool's panel key
    (``magi runner-key --panel``) and no runner key."""
    judges = _runner(world, name, command)
    (judges.home / KEY_FILE).unlink()
    write_panel(world.home, judges.home / PANEL_FILE)
    return judges


def three_runners(world: World) -> tuple[dict[str, tuple[World, str]], World, World]:
    """The second implementer on the gpu runner, the third judge on a runner that only
    seats judges (``self-hosted, judges``, the panel key alone), the rest on the pool: the
    runners besides the pool for ``_drive_on``, the gpu runner, the judges' runner."""
    _gpu_roster(world)
    _roster_on(world, JUDGES, "judge-agent", "jurorthree")
    new_key(world.home)
    gpu = _gpu_runner(world)
    judges = _judges_runner(world, "judges", "judge-agent")
    others = {
        json.dumps(labels): (runner, f"{runner.tmp / 'bin'}:{os.environ['PATH']}")
        for labels, runner in ((GPU, gpu), (JUDGES, judges))
    }
    return others, gpu, judges


def _elected_on_three(world: World, monkeypatch) -> Run:  # type: ignore[no-untyped-def]
    """``world``'s competition run to its end on ``three_runners``: the run as it ended."""
    others, _, _ = three_runners(world)
    return _elected(world, others, monkeypatch)[0]


def _elected(world: World, others: dict[str, tuple[World, str]], monkeypatch) -> tuple[Run, str]:  # type: ignore[no-untyped-def]
    """``world``'s first stage on the pool, then every stage on the runner its labels name
    (``others`` by their labels, else the pool) until the run ends ready: it, its id."""
    run_id = _first_stage(world, monkeypatch)
    done = _drive_on(world, others, run_id, monkeypatch, 0)
    assert done.status is RunStatus.READY, done.reason
    return done, run_id


def _first_stage(world: World, monkeypatch) -> str:  # type: ignore[no-untyped-def]
    """The first stage's job on the pool, published: the run's id."""
    code, out = _stage(world, POOL)
    assert code == 0, out
    run_id = _run_id(world)
    assert world.publish(monkeypatch, run_id).exit_code == 0
    return run_id


def _judged_on_their_runner(world: World, monkeypatch) -> tuple[Run, World, str]:  # type: ignore[no-untyped-def]
    """``world``'s competition run to its end, its third judge on a judges-only runner:
    the run as it ended, that runner, the run id."""
    new_key(world.home)
    gpu = _judges_runner(world)
    gpu_path = f"{gpu.tmp / 'bin'}:{os.environ['PATH']}"
    done, run_id = _elected(world, {json.dumps(GPU): (gpu, gpu_path)}, monkeypatch)
    return done, gpu, run_id


def _sealed_in_origin(world: World, run_id: str) -> dict[str, str]:
    """Every sealed text the record ref ever held, by commit and path: what any runner
    that fetches the run records can try to open."""
    ref = f"refs/magi/runs/{run_id}"
    out: dict[str, str] = {}
    commits = subprocess.run(
        ["git", "-C", str(world.remote), "rev-list", ref], capture_output=True, text=True,
        check=True,
    ).stdout.split()  # fmt: skip
    for commit in commits:
        names = subprocess.run(
            ["git", "-C", str(world.remote), "ls-tree", "-r", "--name-only", commit],
            capture_output=True, text=True, check=True,
        ).stdout.split()  # fmt: skip
        for name in names:
            if name.endswith((".sealed", ".txt")) and not name.startswith("artifacts/"):
                out[f"{commit[:8]}:{name}"] = subprocess.run(
                    ["git", "-C", str(world.remote), "show", f"{commit}:{name}"],
                    capture_output=True, text=True, check=True,
                ).stdout  # fmt: skip
    return out


def _names_no_author(run: dict) -> bool:
    """A record (as JSON) in which no candidate can be traced to the agent that wrote it."""
    implementers = {c["seat"] for c in run["candidates"]}
    return (
        run["seed"] == 0
        and all(run["seats"][s]["agent"] == HIDDEN for s in implementers if s in run["seats"])
        and all(t["agent"] == HIDDEN for t in run["turns"] if t["seat"] in implementers)
    )


def test_a_runner_that_only_seats_judges_never_learns_an_author(
    tmp_path, monkeypatch, one_runner
) -> None:
    """The third judge's agent is logged in on a runner that holds the panel key and no
    runner key. Its first judgement, its deliberation turn (the judges split) and its vote
    are each forked to it from a panel; the election is the one a single runner holds, and
    nothing that runner holds, or can open of what the record ref ever held, names who
    wrote which candidate before the tally."""
    world = make_world(tmp_path)
    _gpu_roster(world, "jurorthree")
    config = world.repo / "magi.toml"
    config.write_text(
        config.read_text().replace('"gpu-agent", "evidence"', '"gpu-agent", "contrary"')
    )
    _commit_config(world, "the gpu judge ranks the evidence backwards: the judges split")
    done, gpu, run_id = _judged_on_their_runner(world, monkeypatch)

    # The judges split, and the gpu judge argued on its runner: a fork of its own.
    assert [(d.seat, d.round) for d in done.deliberation] == [
        ("judge-1", 1), ("judge-2", 1), ("judge-3", 1),
    ]  # fmt: skip
    assert all(d.status == "ok" for d in done.deliberation)
    sent = [(d.get("stage"), json.loads(d["runner-labels"])) for d in _dispatched(world)]
    both, join = [("fork", POOL), ("fork", GPU), (None, POOL)], (None, POOL)
    assert sent[:8] == [*both, ("fork", GPU), join, *both], sent
    on_gpu = (world.scripted / "gpu-calls").read_text().split()
    assert set(on_gpu[0::2]) == {"judge-3"}, "only its seat ran on the gpu runner"
    assert on_gpu[1::2][:3] == ["judge", "deliberate", "vote"], on_gpu
    asked = seat_calls(world.scripted)
    for node in ("judge", "vote"):
        assert [n for (_, nd), n in asked.items() if nd == node] == [1, 1, 1], asked
    assert [n for (_, nd), n in asked.items() if nd == "deliberate"] == [1, 1, 1], asked
    (ref_id,) = one_runner.list_ids()
    reference = one_runner.load_run(ref_id)
    assert done.tally is not None
    assert reference.tally is not None
    assert done.author(done.tally.winner) == reference.author(reference.tally.winner)

    # What the judges' runner holds: no runner key; every record it holds from before the
    # tally (its panels) and every file beside them names no implementer; no implementer's
    # artifact.
    assert not (gpu.home / KEY_FILE).exists()
    panels = [p for p in (gpu.home / "panels").rglob("*") if p.is_file()]
    assert [p for p in panels if p.name == "run.json"], "the judges' runner kept its panels"
    for path in panels:
        _names_no_implementer(path.read_bytes(), str(path))
    for path in (gpu.home / "runs").glob("*/run.json"):  # whole records: after the tally
        assert json.loads(path.read_text())["tally"] is not None, path
    assert not [p for p in gpu.home.rglob("implement-*")], "no implementer's words"
    # What it can open of everything the record ref held: the panels and its own answers,
    # each naming no implementer, with commits that say neither who made them nor when;
    # never the sealed run, an implement result or a pool seat job's answers.
    key = panel_key(gpu.home)
    assert key is not None
    opened: list[str] = []
    for where, text in _sealed_in_origin(world, run_id).items():
        sealed = parse_sealed(text, where)
        for kind in ("panel", "fork", "run"):
            try:
                members = open_sealed(
                    key, sealed, run_id=run_id, issue=7, base=done.base_sha or "",
                    where=where, kind=kind,
                )  # fmt: skip
            except ActionError:
                continue
            opened.append(kind)
            assert not where.endswith(SEALED), f"{where} opened with the panel key"
            for name, blob in members.items():
                if name != "candidates.bundle":
                    _names_no_implementer(blob, f"{where}:{name}")
            if kind == "panel":
                _neutral_commits(world, members["candidates.bundle"], tmp_path / "panel-check")
            else:
                body = json.loads(members["fork.json"])
                assert set(body["seats"]) == {"judge-3"}, "only its own answers open there"
    assert sorted(set(opened)) == ["fork", "panel"], opened


def _out_of_quota(world: World, agent: str) -> None:
    """``agent`` runs out of quota at every turn (the scripted ``quota`` persona)."""
    config = world.repo / "magi.toml"
    block = re.search(r'id = "' + agent + r'"\n.*?\n(?=\n|\[)', config.read_text(), re.S)
    assert block, config.read_text()
    config.write_text(
        config.read_text().replace(block.group(0), block.group(0).replace('"evidence"', '"quota"'))
    )
    _commit_config(world, f"{agent} is out of quota")


def test_a_judge_out_of_quota_is_asked_once_and_the_judges_runner_still_votes(
    tmp_path, monkeypatch
) -> None:
    """judge-2 runs out of quota (no failover) and judge-3 sits on the judges' runner: on
    one runner the panel goes on without judge-2, asked once. Staged the same: a seat job
    works in its own wave only (never stopped by an earlier wave's seat still to ask), and
    no later stage of the pass asks judge-2 again."""
    world = make_world(tmp_path, graph="failover = false")
    _gpu_roster(world, "jurorthree")
    _out_of_quota(world, "jurortwo")
    done, _, _ = _judged_on_their_runner(world, monkeypatch)
    asked = seat_calls(world.scripted)
    assert asked[("judge-2", "judge")] == 1, asked
    assert {v.seat: v.status for v in done.votes} == {"judge-1": "ok", "judge-3": "ok"}
    assert [(j.seat, j.status) for j in done.judgements] == [
        ("judge-1", "ok"), ("judge-2", "quota"), ("judge-3", "ok"),
    ]  # fmt: skip


def test_three_runners_elect_as_one_does_a_judge_passing_to_another_runner_included(
    tmp_path, monkeypatch, one_runner
) -> None:
    """A login per runner: the second implementer's on the gpu runner, the third judge's on
    a runner that holds only the panel key, the rest on the pool. judge-2's agent runs out
    of quota in the pool's seat job and the seat passes to the next judge of the roster,
    whose login is on the judges' runner: the join takes the pool's answers (its own copy
    of the run untouched by the seat job), forks that seat to the judges' runner, which
    judges from a panel naming only the seats it asks. The run ends ready with the
    election a single runner holds, each runner's CLI asked for its own seats only."""
    world = make_world(tmp_path)
    _out_of_quota(world, "jurortwo")
    done = _elected_on_three(world, monkeypatch)
    assert done.seats["judge-2"].agent == "jurorthree"
    assert done.seats["judge-2"].failover_from == ["jurortwo"]
    assert {j.seat: j.status for j in done.judgements} == dict.fromkeys(
        ("judge-1", "judge-2", "judge-3"), "ok"
    )
    on_gpu = (world.scripted / "gpu-calls").read_text().split()
    assert on_gpu[1::2] == ["implement", "review"], "its implementer's seat, then a reviewer's"
    on_judges = (world.scripted / "judges-calls").read_text().split()
    assert set(on_judges[0::2]) == {"judge-2", "judge-3"}, on_judges
    assert sorted(on_judges[1::2]) == ["judge", "judge", "vote", "vote"], on_judges
    (ref_id,) = one_runner.list_ids()
    reference = one_runner.load_run(ref_id)
    assert done.tally is not None
    assert reference.tally is not None
    assert done.author(done.tally.winner) == reference.author(reference.tally.winner)


def _names_no_implementer(blob: bytes, where: str) -> None:
    """No implementer's roster id, nor its agent as a seat's, in ``blob`` (a record's
    committed config aside: the roster is public, who wrote what is not)."""
    text = blob.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        data.pop("config", None)
        if "candidates" in data and "seats" in data and "seed" in data:
            assert _names_no_author(data), where
        text = json.dumps(data)
    for agent in IMPLEMENTERS:
        assert agent not in text, f"{where} names {agent}"


def _neutral_commits(world: World, bundle: bytes, at: Path) -> None:
    """Every commit of a panel's bundle made by magi's neutral identity, all at one time."""
    if not at.exists():
        subprocess.run(["git", "clone", "-q", str(world.remote), str(at)], check=True)
    (at / "panel.bundle").write_bytes(bundle)
    git = ["git", "-C", str(at)]
    subprocess.run([*git, "fetch", "-q", "panel.bundle", "+refs/heads/*:refs/panel/*"], check=True)
    shown = subprocess.run(
        [*git, "log", "--format=%an %ae %cn %ce %ad %cd", "--date=unix", "--branches=x",
         "--glob=refs/panel/*", "--not", "origin/main"],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    assert shown, "the panel carries the candidates' commits"
    assert len(set(shown)) == 1, shown
    assert shown[0].startswith("magi magi@localhost.invalid magi magi@localhost.invalid"), shown


def _two_runners(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, persona: str = "", **world: str | tuple
) -> tuple[World, World, str, str]:
    """The pool and the gpu runner (the second implementer's agent on gpu, acting as
    ``persona`` when given), the first stage run on the pool and published: (pool, gpu,
    the gpu runner's PATH, the run id)."""
    pool = make_world(tmp_path, **world)  # type: ignore[arg-type]
    _gpu_roster(pool)
    if persona:
        config = pool.repo / "magi.toml"
        config.write_text(
            config.read_text().replace('"gpu-agent", "wrong"', f'"gpu-agent", "{persona}"')
        )
        _commit_config(pool, f"the gpu agent acts as {persona}")
    new_key(pool.home)
    gpu = _gpu_runner(pool)
    gpu_path = f"{gpu.tmp / 'bin'}:{os.environ['PATH']}"
    return pool, gpu, gpu_path, _first_stage(pool, monkeypatch)


def _commit_config(world: World, message: str) -> None:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "commit", "-qam", message], cwd=world.repo, check=True)
    subprocess.run(["git", "push", "-q", "origin", "main"], cwd=world.repo, check=True)


def test_a_forked_review_round_with_a_reviewer_out_of_quota_stalls_at_its_join(
    tmp_path, monkeypatch
):
    """The gpu agent's review seat is lost to a rate limit in its seat job: under
    `incomplete_review = "block"` the join stalls the run, as the round does on one runner,
    rather than asking that seat again at once; the seat was asked once."""
    world, gpu, gpu_path, run_id = _two_runners(
        tmp_path, monkeypatch, "quota-at-review:wrong", graph="failover = false"
    )
    done = _drive(world, gpu, run_id, monkeypatch, gpu_path, 0)
    assert done.status is RunStatus.STALLED, done.reason
    assert "lost to a rate limit" in (done.reason or "")
    assert done.review is not None
    lost = [s for s in done.review.rounds[-1].seats if s.status == "quota"]
    assert len(lost) == 1
    on_gpu = (world.scripted / "gpu-calls").read_text().split()
    assert on_gpu[1::2].count("review") == 1, "the lost seat was not asked again"


def test_a_join_whose_seats_all_ran_out_of_quota_stalls_and_a_retry_forks_again(
    tmp_path, monkeypatch
):
    """Both implementers' seat jobs lose their seat to quota: the join's pass does not fork
    the wave again (its seats were asked in this pass) and stalls, as one runner does; a
    `/magi retry` forks it anew, and publish dispatches that new fork."""
    world, gpu, gpu_path, run_id = _two_runners(
        tmp_path, monkeypatch, graph="failover = false", implementers=("quota", "quota")
    )
    done = _drive(world, gpu, run_id, monkeypatch, gpu_path, 0)
    assert done.status is RunStatus.STALLED, done.reason
    assert "lost to a rate limit or quota" in (done.reason or "")
    sent = [(d.get("stage"), json.loads(d["runner-labels"])) for d in _dispatched(world)]
    assert sent == [("fork", POOL), ("fork", GPU), (None, POOL)], "one fork, one join"
    asked = [n for (_, node), n in seat_calls(world.scripted).items() if node == "implement"]
    assert asked == [1, 1]
    # `/magi retry`: the pool's compete, a new pass, forks the wave again; it is dispatched.
    first = done.fork_id
    code, out = _stage(world, POOL, "--run-id", run_id)
    assert code == 0, out
    again = Store(world.home).load_run(run_id)
    assert again.status is RunStatus.HANDED_OFF, again.reason
    assert again.fork == [POOL, GPU]
    assert again.fork_id != first
    assert world.publish(monkeypatch, run_id).exit_code == 0
    assert [d.get("stage") for d in _dispatched(world)[3:]] == ["fork", "fork"]


def test_a_second_review_round_after_a_forked_first_asks_every_reviewer_again(
    tmp_path, monkeypatch
):
    """Round one is forked and raises a blocker; the fixer fixes in the join's pass, and
    round two asks both reviewers again (forked again), not only those the join has not
    seen: the seats a join's seat jobs asked count for their own round only."""
    world, gpu, gpu_path, run_id = _two_runners(tmp_path, monkeypatch, "wrong+blocker")
    done = _drive(world, gpu, run_id, monkeypatch, gpu_path, 0)
    assert done.status is RunStatus.READY, done.reason
    assert done.review is not None
    assert len(done.review.rounds) == 2
    for rnd in done.review.rounds:
        assert [s.status for s in rnd.seats] == ["ok", "ok"], rnd.round
    on_gpu = (world.scripted / "gpu-calls").read_text().split()
    assert on_gpu[1::2].count("review") == 2
