"""kill -9 at every node of a whole run, one after another, and the same outcome.

One real ``magi run`` is killed (SIGKILL, ``magi.state.failpoint``) right after a node began, and
each ``--resume`` is killed at the next point, through every node of the default graph and
the review loop; the last resume is left to finish. The run must then end as an unkilled
run of the same seed and agents does (same winner), having asked no seat twice, and
``magi fold`` must leave nothing of it but the winner's branch. A chain costs one run plus a
process start per point, where a run per point would cost a run each.
"""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path

import pytest

from graph_helpers import LiveRun, seat_calls
from magi.model.run import RunStatus
from magi.state.failpoint import ENV

PERSONAS = {"a1": "right", "a2": "partial", "a3": "wrong"}
JUDGES = {"j1": "evidence", "j2": "minimal", "j3": "evidence"}  # split: deliberation, vote


def _finished(live) -> tuple[list[str], Counter, str]:
    """An unkilled run: its nodes in order, what each seat was asked, the winner's agent."""
    proc = live.start(seed=3)
    out = live.ended(proc, "an unkilled run")
    assert proc.returncode == 0, out
    run = live.store.load_run(live.run_id())
    winner = run.agent_of(run.candidate(run.tally.winner).seat)
    return list(run.timings), seat_calls(live.sd), winner


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory):
    """One unkilled run for the whole module: what every killed run must come back to."""
    where = tmp_path_factory.mktemp("reference")
    live = LiveRun(where, PERSONAS, JUDGES)
    try:
        yield _finished(live)
    finally:
        live.close()


@pytest.fixture
def live(tmp_path: Path):
    made = LiveRun(tmp_path, PERSONAS, JUDGES)
    yield made
    made.close()


def test_a_kill_at_every_node_resumes_to_the_unkilled_outcome(reference, live):
    nodes, paid, winner_agent = reference

    # Right after each node began, and right after it ended, before anything saved its end.
    points = [f"node:{n}:{when}" for n in nodes for when in ("begun", "ended")]
    killed = []
    run_id = None
    for i, point in enumerate(points):
        live.env[ENV] = point
        if i == 0:
            proc = live.start(seed=3)
            out = live.ended(proc, point)
            code = proc.returncode
            run_id = live.run_id()
        else:
            done = live.magi("run", "--resume", run_id)
            out, code = done.stdout + done.stderr, done.returncode
        assert code == -9, f"{point}: exited {code} instead of being killed\n{out}"
        killed.append(point)
    del live.env[ENV]
    done = live.magi("run", "--resume", run_id)
    assert done.returncode == 0, done.stdout + done.stderr
    run = live.store.load_run(run_id)
    assert run.status is RunStatus.READY, run.reason
    assert run.agent_of(run.candidate(run.tally.winner).seat) == winner_agent
    assert seat_calls(live.sd) == paid, "a seat was asked again after a kill"
    folded = live.magi("fold", run_id)
    assert folded.returncode == 0, folded.stdout + folded.stderr
    left = subprocess.run(
        ["git", "branch", "--list", "--format=%(refname:short)", f"magi/{run_id}/*"],
        cwd=live.repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert left == [f"magi/{run_id}/{run.tally.winner}"]
    assert not Path(run.worktree_root or "/nonexistent").exists()
    assert len(killed) == 2 * len(nodes)


def _killed_at(live, point: str) -> str:
    """``magi run`` killed -9 at failpoint ``point``: the run's id."""
    live.env[ENV] = point
    proc = live.start(seed=3)
    out = live.ended(proc, point)
    assert proc.returncode == -9, f"{point}: exited {proc.returncode}\n{out}"
    del live.env[ENV]
    return live.run_id()


def _resumed(live, run_id: str) -> str:
    """``magi run --resume``, which must exit 0."""
    done = live.magi("run", "--resume", run_id)
    assert done.returncode == 0, done.stdout + done.stderr
    return run_id


def _kill_then_finish(live, point: str) -> str:
    return _resumed(live, _killed_at(live, point))


@pytest.mark.parametrize("point", ["turn:judge-1:vote"])
def test_a_kill_between_a_turn_and_its_node_asks_that_seat_once_more_at_most(
    reference, live, point
):
    """Killed after a seat's turn was recorded but before its node stored the answer: the
    resume reaches the unkilled outcome, and only seats of that node are asked again: that
    seat, and any other whose parallel turn had ended but whose answer the node had not yet
    stored (a known cost, named in docs/record.md: the node records an answer, not the
    intent to ask, so a reply already paid for is not read back from its artifact)."""
    _, paid, winner_agent = reference
    run_id = _kill_then_finish(live, point)
    run = live.store.load_run(run_id)
    assert run.status is RunStatus.READY, run.reason
    assert run.agent_of(run.candidate(run.tally.winner).seat) == winner_agent
    node = point.split(":")[2]
    again = seat_calls(live.sd) - paid
    assert {n for _, n in again} <= {node}, f"asked again: {dict(again)}"
    assert all(n == 1 for n in again.values()), f"asked more than once again: {dict(again)}"


def test_a_kill_after_an_implement_turn_takes_its_work_from_the_clone(reference, live):
    """Killed after an implementer's turn was recorded, before the hand-back: the resume
    takes its work from its clone and its reply from the artifacts, and asks no implementer
    whose turn had ended again (the dearest turns of a run); one still out when the kill
    came is asked again. The outcome is the unkilled one."""
    _, paid, winner_agent = reference
    run_id = _killed_at(live, "turn:impl-B:implement")
    killed = live.store.load_run(run_id)
    ended = {t.seat for t in killed.turns if t.node == "implement" and t.status == "ok"}
    assert "impl-B" in ended
    assert killed.candidate("B").status == "pending"  # the kill came before its hand-back
    run = live.store.load_run(_resumed(live, run_id))
    assert run.status is RunStatus.READY, run.reason
    assert run.agent_of(run.candidate(run.tally.winner).seat) == winner_agent
    again = seat_calls(live.sd) - paid
    assert not [s for s, n in again if n == "implement" and s in ended], dict(again)
    assert {n for _, n in again} <= {"implement"}, dict(again)
    taken = run.candidate("B")
    assert taken.head
    assert taken.files
    assert taken.summary
    assert any("ended before magi was stopped" in e.message for e in run.events)


def test_a_paid_turn_whose_clone_a_resume_remade_is_asked_again(reference, live):
    """Killed after an implementer's turn, its clone then found unsound (off its branch):
    the resume's prep makes it again at the base, so the work is gone and the seat is asked
    once more, never handed back as a candidate that did nothing."""
    _, paid, winner_agent = reference
    run_id = _killed_at(live, "turn:impl-B:implement")
    killed = live.store.load_run(run_id)
    assert killed.candidate("B").status == "pending"
    tree = killed.candidate("B").worktree
    assert tree
    subprocess.run(["git", "checkout", "-q", "--detach"], cwd=tree, check=True)
    run = live.store.load_run(_resumed(live, run_id))
    assert run.status is RunStatus.READY, run.reason
    assert run.agent_of(run.candidate(run.tally.winner).seat) == winner_agent
    again = seat_calls(live.sd) - paid
    assert again[("impl-B", "implement")] == 1, dict(again)
    assert run.candidate("B").files  # its work, done again, not an empty hand-back
    assert any("made again, so what it did is lost" in e.message for e in run.events)
    taken = "candidate B: its turn ended before magi was stopped; its work is taken"
    assert not any(e.message.startswith(taken) for e in run.events)


def test_a_kill_after_a_local_merge_landed_does_not_squash_it_twice(live):
    """merge.mode = local, killed between the fast-forward and its record: the resume finds
    the run's own squash on the base and records it; the base holds one squash of the run."""
    live.cfg.write_text(live.cfg.read_text() + '\n[merge]\nmode = "local"\n')
    run_id = _kill_then_finish(live, "merge:landed")
    run = live.store.load_run(run_id)
    assert run.status is RunStatus.MERGED, run.reason
    assert run.merge is not None
    log = subprocess.run(
        ["git", "log", "--format=%B%x00", f"{run.base_sha}..{run.base}"],
        cwd=live.repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert log.count(f"magi run {run_id} ") == 1, log
    head = subprocess.run(
        ["git", "rev-parse", run.base], cwd=live.repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert run.merge.commit == head
    assert any("an interrupted merge left" in e.message for e in run.events)
