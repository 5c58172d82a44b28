"""``make bench``: the wall time of a competition on one runner against two and three.

The roster of ``tests/e2e/test_action_stages.py`` (2 implementers, 3 judges, 2
reviewers), every implementer sleeping ``SLEEP`` seconds before it works. On one runner
that holds every login, the whole run is one agents job (and its publish). On two, the
second implementer's login lives on a ``gpu`` runner: the pool's job preps and forks the
wave, the two seat jobs run side by side, the join carries on, and the review round,
whose two seats need both runners, is forked and joined the same way. On three, the third
judge's login lives on a runner that holds only the panel key: the judges' wave and the
vote are forked to it too. Each job is a real
``magi action compete`` process with its own checkout and ``MAGI_HOME``; publish runs
against the GitHub double, so GitHub's own queueing and job start-up (seconds to
minutes) are not in the figure: it is what the stages cost magi. Reported, no goal: the
stages are for logins that cannot share a machine, not for speed (one runner already runs
its seats side by side).
"""

from __future__ import annotations

import json
import os
import re
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "e2e")]

import pytest  # noqa: E402  (the tests' helpers: a world, its runners, the double)
from test_action_stages import (  # noqa: E402
    GPU,
    POOL,
    _dispatched,
    _gpu_roster,
    _gpu_runner,
    _run_id,
    _stage,
)
from test_action_stages import three_runners as stages_three  # noqa: E402

from action_helpers import IMPLEMENTERS, World, make_world  # noqa: E402
from magi.action.seal import new_key  # noqa: E402
from magi.model.run import RunStatus  # noqa: E402
from magi.state.store import Store  # noqa: E402

SLEEP = 2.0
REPS = 3


def _sleepy(world: World, *agents: str) -> None:
    """These implementers sleep SLEEP seconds before they work."""
    config = world.repo / "magi.toml"
    text = config.read_text()
    for agent in agents:
        text = re.sub(
            r'(id = "' + agent + r'"\nkind = "command"\ncommand = )\[',
            r'\1["sh", "-c", "sleep ' + str(SLEEP) + r'; exec \\"$0\\" \\"$@\\"", ',
            text,
        )
    config.write_text(text)


def _commit(world: World, message: str) -> None:
    import subprocess

    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "commit", "-qam", message], cwd=world.repo, check=True)
    subprocess.run(["git", "push", "-q", "origin", "main"], cwd=world.repo, check=True)


def one_runner(tmp: Path, mp: pytest.MonkeyPatch) -> float:
    world = make_world(tmp)
    _sleepy(world, *IMPLEMENTERS)
    _commit(world, "sleepy")
    t0 = time.monotonic()
    code, out = _stage(world, POOL)
    assert code == 0, out
    run_id = _run_id(world)
    assert world.publish(mp, run_id).exit_code == 0
    wall = time.monotonic() - t0
    assert wall > SLEEP, "the implementers slept"
    assert Store(world.home).load_run(run_id).status is RunStatus.READY
    return wall


def _sleepy_gpu(gpu: World) -> str:
    """The gpu's implementer sleeps there; the gpu runner's PATH."""
    wrapper = gpu.tmp / "bin" / "gpu-agent"
    wrapper.write_text(wrapper.read_text().replace("#!/bin/sh\n", f"#!/bin/sh\nsleep {SLEEP}\n", 1))
    return f"{gpu.tmp / 'bin'}:{os.environ['PATH']}"


def two_runners(tmp: Path, mp: pytest.MonkeyPatch) -> tuple[float, int]:
    world = make_world(tmp)
    _gpu_roster(world)
    _sleepy(world, IMPLEMENTERS[0])
    _commit(world, "sleepy")
    new_key(world.home)
    gpu = _gpu_runner(world)
    return _staged(world, {json.dumps(GPU): (gpu, _sleepy_gpu(gpu))}, mp)


def three_runners(tmp: Path, mp: pytest.MonkeyPatch) -> tuple[float, int]:
    """The same, and the third judge on a runner that only seats judges (the panel key)."""
    world = make_world(tmp)
    _sleepy(world, IMPLEMENTERS[0])
    _commit(world, "sleepy")
    others, gpu, _ = stages_three(world)
    others[json.dumps(GPU)] = (gpu, _sleepy_gpu(gpu))
    return _staged(world, others, mp)


def _staged(
    world: World, others: dict[str, tuple[World, str]], mp: pytest.MonkeyPatch
) -> tuple[float, int]:
    """Wall time of ``world``'s competition, stage after stage (a forked wave's seat jobs
    side by side) on the pool and ``others``, and the number of agents jobs."""
    t0 = time.monotonic()
    code, out = _stage(world, POOL)
    assert code == 0, out
    run_id = _run_id(world)
    assert world.publish(mp, run_id).exit_code == 0
    jobs, seen = 1, 0
    for _ in range(20):  # each stage publish dispatched, until the run ends
        sent = _dispatched(world)
        if seen >= len(sent):
            break
        batch = [sent[seen]]
        if batch[0].get("stage") == "fork":  # a forked wave's seat jobs, side by side
            batch = [d for d in sent[seen:] if d.get("stage") == "fork"]
        seen += len(batch)
        fork = ["--fork"] if batch[0].get("stage") == "fork" else []
        with ThreadPoolExecutor(len(batch)) as pool:
            ran = []
            for inputs in batch:
                labels = json.loads(inputs["runner-labels"])
                runner, on = others.get(json.dumps(labels), (world, ""))
                ran.append(
                    (
                        runner,
                        pool.submit(_stage, runner, labels, "--run-id", run_id, *fork, path=on),
                    )
                )
            for _, job in ran:
                code, out = job.result()
                assert code == 0, out
        for runner, _ in ran:
            assert runner.publish(mp, run_id).exit_code == 0
        jobs += len(batch)
    assert Store(world.home).load_run(run_id).status is RunStatus.READY
    return time.monotonic() - t0, jobs


def main() -> int:
    mp = pytest.MonkeyPatch()
    one: list[float] = []
    two: list[float] = []
    three: list[float] = []
    jobs2 = jobs3 = 0
    with tempfile.TemporaryDirectory(prefix="magi-bench-stages-") as tmp:
        for rep in range(REPS):  # alternated, so a machine that slows down moves all three
            one.append(one_runner(Path(tmp) / f"one{rep}", mp))
            wall, jobs2 = two_runners(Path(tmp) / f"two{rep}", mp)
            two.append(wall)
            wall, jobs3 = three_runners(Path(tmp) / f"three{rep}", mp)
            three.append(wall)
    mp.undo()
    a, b, c = statistics.median(one), statistics.median(two), statistics.median(three)
    print(
        f"magi stages bench, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, "
        f"python {sys.version.split()[0]}, implementers sleep {SLEEP} s, median of {REPS}"
    )
    rows = [
        ("one runner, one agents job", a),
        (f"two runners, {jobs2} agents jobs (forked waves)", b),
        (f"three runners, {jobs3} agents jobs (a judges' runner)", c),
    ]
    for what, wall in rows:
        print(f"  {what:<50} {wall:6.2f} s  {wall / a:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
