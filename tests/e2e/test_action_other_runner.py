"""``/magi retry`` on a runner that never saw the run: carried on from the record ref after
the tally; before it, from the copy sealed beside it when both runners hold the pool's
runner key, else a new competition (under a new id, the old record kept).

Each runner is its own checkout (a clone of origin, as ``actions/checkout`` with
``fetch-depth: 0`` makes it) and its own ``MAGI_HOME``; the records step's bare repository
is a fetch of ``refs/magi/runs/*`` from origin. Only origin and the GitHub double are shared.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from action_helpers import IMPLEMENTERS, World, make_world, records_step
from magi.action.seal import KEY_FILE, new_key
from magi.model.run import RunStatus
from magi.report import revealed
from magi.state.store import Store


def _run_id(world: World) -> str:
    out = (world.tmp / "runner-temp-compete" / "output").read_text()
    found = re.findall(r"^run-id=(\S+)$", out, re.M)
    assert found, out
    return found[-1]


def _other_runner(world: World) -> tuple[World, Path]:
    """A second runner: its own clone of origin and home, the records its step fetched."""
    tmp = world.tmp / "runner-2"
    tmp.mkdir(exist_ok=True)  # a test may have put the pool's key in its home first
    checkout = tmp / "checkout"
    subprocess.run(["git", "clone", "-q", str(world.remote), str(checkout)], check=True)
    records = records_step(world, tmp / "magi-records.git")
    return World(tmp, checkout, world.remote, world.scripted, world.github), records


def _tree(world: World, ref: str) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(world.remote), "ls-tree", "-r", "--name-only", ref],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return out.stdout.split()


def _blob(world: World, spec: str) -> str:
    out = subprocess.run(
        ["git", "-C", str(world.remote), "cat-file", "blob", spec],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return out.stdout


def _calls(world: World) -> list[dict[str, str]]:
    path = world.scripted / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _stopped(tmp: Path, monkeypatch: pytest.MonkeyPatch, at: str) -> tuple[World, str]:
    """A run whose every seat is out of quota at ``at``, competed and published."""
    world = make_world(
        tmp,
        judges=f"quota-at-{at}:evidence",
        implementers=(f"quota-at-{at}:right", f"quota-at-{at}:wrong"),
    )
    res = world.compete()
    assert res.returncode == 0, res.stdout + res.stderr
    run_id = _run_id(world)
    assert Store(world.home).load_run(run_id).status is RunStatus.STALLED
    published = world.publish(monkeypatch, run_id)
    assert published.exit_code == 0, published.output
    return world, run_id


def test_after_the_tally_another_runner_carries_the_run_on_from_the_record_ref(
    tmp_path, monkeypatch
) -> None:
    world, run_id = _stopped(tmp_path, monkeypatch, "review")
    first = Store(world.home).load_run(run_id)
    assert first.tally is not None
    assert first.tally.winner is not None
    other, records = _other_runner(world)
    (world.scripted / "unlock").write_text("")  # the quota is back
    before = len(_calls(world))
    res = other.compete("--run-id", run_id, env={"MAGI_RUN_RECORDS": str(records)})
    assert res.returncode == 0, res.stdout + res.stderr
    assert _run_id(other) == run_id, "the same run, not a new competition"
    run = Store(other.home).load_run(run_id)
    assert run.status is not RunStatus.STALLED, run.reason
    assert run.tally == first.tally, "the tally is the record's"
    asked = {c["node"] for c in _calls(world)[before:]}
    assert asked, "the review was carried on"
    assert not asked & {"implement", "judge", "deliberate", "vote"}, asked
    said = [e.message for e in run.events if "carried on from refs/magi/runs/" in e.message]
    assert said, [e.message for e in run.events]
    assert Path(run.repo) == other.repo.resolve()
    assert [n for n, s in first.seats.items() if s.session_id], "the judges had conversations"
    assert "full context" in said[0]
    kept = {p.name for p in (Store(other.home).run_dir(run_id) / "artifacts").iterdir()}
    assert {n for n in kept if n.startswith("judge-")}, "the judges' transcripts came along"
    # Published again from the second runner: the same record, carried on, nothing lost.
    ref = f"refs/magi/runs/{run_id}"
    stored_before = set(_tree(world, ref))
    published = other.publish(monkeypatch, run_id)
    assert published.exit_code == 0, published.output
    assert stored_before <= set(_tree(world, ref)), "every artifact the record held is kept"
    record = json.loads(_blob(world, f"{ref}:run.json"))
    assert record["status"] == run.status.value


def test_before_the_tally_another_runner_starts_over_under_a_new_id_and_says_why(
    tmp_path, monkeypatch
) -> None:
    world, run_id = _stopped(tmp_path, monkeypatch, "judge")
    assert not revealed(Store(world.home).load_run(run_id)), "stalled before a tally counted"
    ref = f"refs/magi/runs/{run_id}"
    old = world.remote_refs()[ref]
    other, records = _other_runner(world)
    (world.scripted / "unlock").write_text("")
    res = other.compete("--run-id", run_id, env={"MAGI_RUN_RECORDS": str(records)})
    assert res.returncode == 0, res.stdout + res.stderr
    new_id = _run_id(other)
    assert new_id != run_id, "never a second run under the first one's id"
    run = Store(other.home).load_run(new_id)
    assert run.status is not RunStatus.STALLED
    (why,) = [e.message for e in run.events if run_id in e.message]
    assert "before its tally" in why
    assert "new competition" in why
    assert world.remote_refs()[ref] == old, "the old record is untouched"


def test_an_answer_for_a_run_another_runner_holds_is_refused_with_the_reason(
    tmp_path, monkeypatch
) -> None:
    """``/magi answer`` never starts a competition: the asking run waits for its runner."""
    world = make_world(tmp_path, implementers=("ask:right", "wrong"))
    res = world.compete()
    assert res.returncode == 0, res.stdout + res.stderr
    run_id = _run_id(world)
    assert world.publish(monkeypatch, run_id).exit_code == 0
    other, records = _other_runner(world)
    other.issue_file()
    rows = [{"id": 5, "body": "/magi answer SQLite", "created_at": "2099-01-01T00:00:00Z"}]
    (other.tmp / "comments.json").write_text(json.dumps(rows))
    env = {"MAGI_RUN_RECORDS": str(records)}
    res = other.compete("--run-id", run_id, "--answer-comment", "5", env=env)
    assert res.returncode != 0
    assert "cannot be carried on here" in res.stderr
    assert "sealed no copy of it (it holds no runner key)" in res.stderr
    assert not Store(other.home).list_ids(), "no competition was started"


def test_a_second_run_of_one_id_is_not_published_over_the_first(tmp_path, monkeypatch) -> None:
    """The records step could not read the records: compete starts the App's id afresh,
    and publish refuses to write that run over the record that id already has."""
    world, run_id = _stopped(tmp_path, monkeypatch, "judge")
    ref = f"refs/magi/runs/{run_id}"
    old = world.remote_refs()[ref]
    other, _ = _other_runner(world)
    (world.scripted / "unlock").write_text("")
    res = other.compete("--run-id", run_id)  # no records: nothing says the id is taken
    assert res.returncode == 0, res.stdout + res.stderr
    assert _run_id(other) == run_id
    published = other.publish(monkeypatch, run_id)
    assert published.exit_code != 0
    assert "holds another run of id" in published.output
    assert world.remote_refs()[ref] == old


def _same_key(world: World, other: World) -> str:
    """Both runners hold the pool's runner key (made on one, copied to the other)."""
    key = new_key(world.home)
    other.home.mkdir(parents=True, exist_ok=True)
    shutil.copy2(key.path, other.home / KEY_FILE)
    (other.home / KEY_FILE).chmod(0o600)
    return key.fingerprint


def test_before_the_tally_a_runner_holding_the_pools_key_carries_the_run_on(
    tmp_path, monkeypatch
) -> None:
    """Stalled at judging on runner 1; runner 2 opens the sealed copy beside the public
    record, fetches the candidates from it and goes on to the tally and beyond; no
    implementer is asked again, and no reader of the repository learns an author."""
    world = make_world(
        tmp_path,
        judges="quota-at-judge:evidence",
        implementers=("quota-at-judge:right", "quota-at-judge:wrong"),
    )
    other = World(world.tmp / "runner-2", *[Path()] * 2, world.scripted, world.github)
    fingerprint = _same_key(world, other)
    res = world.compete()
    assert res.returncode == 0, res.stdout + res.stderr
    run_id = _run_id(world)
    first = Store(world.home).load_run(run_id)
    assert first.status is RunStatus.STALLED
    assert not revealed(first)
    assert f"sealed for the runners holding key {fingerprint}" in res.stdout + res.stderr
    assert world.publish(monkeypatch, run_id).exit_code == 0
    ref = f"refs/magi/runs/{run_id}"
    sealed = _blob(world, f"{ref}:sealed.txt")
    assert sealed.startswith(f"magi-sealed 1 key={fingerprint}\n")
    body = base64.b64decode(sealed.splitlines()[1])
    for plain in (b'"agent"', b"word_count", b"\x1f\x8b\x08", b"PACK"):
        assert plain not in body  # ciphertext: no record, code, gzip or pack reads through
    assert json.loads(_blob(world, f"{ref}:run.json"))["seed"] == 0, "the public copy as before"
    other, records = _other_runner(world)
    (world.scripted / "unlock").write_text("")
    before = len(_calls(world))
    res = other.compete("--run-id", run_id, env={"MAGI_RUN_RECORDS": str(records)})
    assert res.returncode == 0, res.stdout + res.stderr
    assert _run_id(other) == run_id, "the same run, not a new competition"
    run = Store(other.home).load_run(run_id)
    assert run.tally is not None, run.reason
    assert run.seed == first.seed, "the run's own seed, from the sealed record"
    winner = run.author(run.tally.winner or "")
    assert winner == IMPLEMENTERS[0], "the right candidate wins, as it would on runner 1"
    asked = [c["node"] for c in _calls(world)[before:]]
    assert "judge" in asked, "the judging was carried on"
    assert "implement" not in asked, "no implementer asked again"
    (said,) = [e.message for e in run.events if "carried on from refs/magi/runs/" in e.message]
    assert f"its sealed copy, runner key {fingerprint}" in said
    # Published from runner 2: after the tally the whole record is public, nothing sealed.
    assert other.publish(monkeypatch, run_id).exit_code == 0
    assert "sealed.txt" not in _tree(world, ref)
    assert json.loads(_blob(world, f"{ref}:run.json"))["seed"] == first.seed


def test_an_answer_reaches_the_asking_seat_on_a_runner_holding_the_pools_key(
    tmp_path, monkeypatch
) -> None:
    """The run parked ``asking`` on runner 1; the writer's ``/magi answer`` is dispatched
    to runner 2, which carries only the asking seat on, with the answer, to the end."""
    world = make_world(tmp_path, implementers=("ask:right", "wrong"))
    other = World(world.tmp / "runner-2", *[Path()] * 2, world.scripted, world.github)
    _same_key(world, other)
    res = world.compete()
    assert res.returncode == 0, res.stdout + res.stderr
    run_id = _run_id(world)
    assert world.publish(monkeypatch, run_id).exit_code == 0
    (q,) = Store(world.home).load_run(run_id).questions
    other, records = _other_runner(world)
    other.issue_file()
    rows = [{"id": 5, "body": "/magi answer Redis", "created_at": "2099-01-01T00:00:00Z"}]
    (other.tmp / "comments.json").write_text(json.dumps(rows))
    before = len(_calls(world))
    env = {"MAGI_RUN_RECORDS": str(records)}
    res = other.compete("--run-id", run_id, "--answer-comment", "5", env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    run = Store(other.home).load_run(run_id)
    assert run.status is RunStatus.READY, run.reason
    (done,) = run.questions
    assert (done.status, done.turns[0].answer) == ("answered", "Redis")
    again = {c["seat"] for c in _calls(world)[before:] if c["node"] == "implement"}
    assert again == {q.seat}, "only the asking seat is asked again"
    asker = next(c for c in run.candidates if c.seat == q.seat)
    show = ["git", "-C", str(other.repo), "show"]
    got = subprocess.run([*show, f"{asker.head}:backend.txt"], capture_output=True, text=True)
    assert got.stdout == "Redis\n", got.stderr
    kept = subprocess.run([*show, f"{asker.head}:asked.txt"], capture_output=True, text=True)
    assert kept.stdout, "its first turn's work, from the sealed bundle, stays"


def test_a_runner_with_another_key_starts_over_and_says_which_key_it_lacks(
    tmp_path, monkeypatch
) -> None:
    world, run_id = _stopped(tmp_path, monkeypatch, "judge")  # no key on runner 1: unsealed
    assert "sealed.txt" not in _tree(world, f"refs/magi/runs/{run_id}")
    other, records = _other_runner(world)
    (world.scripted / "unlock").write_text("")
    new_key(other.home)
    res = other.compete("--run-id", run_id, env={"MAGI_RUN_RECORDS": str(records)})
    assert res.returncode == 0, res.stdout + res.stderr
    run = Store(other.home).load_run(_run_id(other))
    (why,) = [e.message for e in run.events if run_id in e.message]
    assert "sealed no copy of it" in why
    # Sealed on runner 1 with its key, tried on a runner with another: said which.
    world2 = make_world(
        tmp_path / "two",
        judges="quota-at-judge:evidence",
        implementers=("quota-at-judge:right", "quota-at-judge:wrong"),
    )
    mine = new_key(world2.home)
    assert world2.compete().returncode == 0
    run_id2 = _run_id(world2)
    assert world2.publish(monkeypatch, run_id2).exit_code == 0
    other2, records2 = _other_runner(world2)
    theirs = new_key(other2.home)
    res = other2.compete("--run-id", run_id2, env={"MAGI_RUN_RECORDS": str(records2)})
    assert res.returncode == 0, res.stdout + res.stderr
    run2 = Store(other2.home).load_run(_run_id(other2))
    assert run2.id != run_id2
    (why2,) = [e.message for e in run2.events if run_id2 in e.message]
    assert f"needs runner key {mine.fingerprint}, not this runner's" in why2
    assert theirs.fingerprint not in why2


def test_a_runner_whose_copy_is_behind_goes_on_from_the_repositorys_record(
    tmp_path, monkeypatch
) -> None:
    """Runner 2 carried the run on (and it stalled again); the next retry lands on runner 1,
    whose own copy is older: going on from it would undo runner 2's work, so the record ref
    decides and runner 1's copy is set aside. Once the run has ended, a stale copy is
    never resumed at all."""
    world, run_id = _stopped(tmp_path, monkeypatch, "review")
    other, records = _other_runner(world)
    res = other.compete("--run-id", run_id, env={"MAGI_RUN_RECORDS": str(records)})
    assert res.returncode == 0, res.stdout + res.stderr
    second = Store(other.home).load_run(run_id)
    assert second.status is RunStatus.STALLED, "still out of quota on runner 2"
    assert other.publish(monkeypatch, run_id).exit_code == 0
    mine = Store(world.home).load_run(run_id)
    assert len(mine.events) < len(second.events)
    fresh = records_step(world, world.tmp / "records-now.git")
    (world.scripted / "unlock").write_text("")
    res = world.compete("--run-id", run_id, env={"MAGI_RUN_RECORDS": str(fresh)})
    assert res.returncode == 0, res.stdout + res.stderr
    assert "went further on another runner" in res.stdout + res.stderr
    run = Store(world.home).load_run(run_id)
    assert run.status is RunStatus.READY, run.reason
    carried = [e.message for e in second.events if "carried on from" in e.message]
    assert carried
    assert carried[0] in [e.message for e in run.events], "runner 2's history is this run's"
    assert list(Store(world.home).runs_dir.glob(f"{run_id}.behind-*")), "the old copy kept"
    # Ended now (published from runner 1): runner 2's copy is behind, and is not resumed.
    assert world.publish(monkeypatch, run_id).exit_code == 0
    records_step(world, records)
    before = len(_calls(world))
    res = other.compete("--run-id", run_id, env={"MAGI_RUN_RECORDS": str(records)})
    assert run.status is RunStatus.READY, run.reason
    assert res.returncode != 0
    assert "already ended ready" in res.stderr
    assert Store(other.home).load_run(run_id).status is RunStatus.STALLED, "kept as it was"
    assert len(_calls(world)) == before, "no agent asked from a stale copy"
