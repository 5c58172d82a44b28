"""What a runner that lacks a run makes of its record ref (``magi.action.agents_job.adopt``):
each answer a record can give, and each reason it cannot be carried on, said."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from git_helpers import one_commit_repo
from magi.action.agents_job.adopt import Adopted, adopt
from magi.action.seal import load_key, new_key, seal
from magi.errors import ActionError
from magi.git.repo import Git
from magi.model.config import Config
from magi.model.run import Run, RunStatus, Tally
from magi.state.runner_key import PANEL_FILE, write_panel
from magi.state.store import Store
from record_helpers import run as fixture_run
from record_helpers import text

RUN = "20261203-120000-abcd"
AGENTS = ["opus-agent", "sonnet-agent", "oc-agent", "judge-agent-x"]


def _git(where: Path, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        ["git", *args], cwd=where, input=stdin, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _records(tmp: Path, record: str, sealed: str | None = None) -> Path:
    """A bare repository holding ``refs/magi/runs/<RUN>`` with ``record`` as its run.json
    (and ``sealed`` as its sealed.txt)."""
    bare = tmp / "records.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    blob = _git(bare, "hash-object", "-w", "--stdin", stdin=record)
    reply = _git(bare, "hash-object", "-w", "--stdin", stdin="judge-1's transcript\n")
    sub = _git(bare, "mktree", stdin=f"100644 blob {reply}\tjudge-judge-1-t1.reply.md\n")
    entries = f"100644 blob {blob}\trun.json\n040000 tree {sub}\tartifacts\n"
    if sealed is not None:
        entries += f"100644 blob {_git(bare, 'hash-object', '-w', '--stdin', stdin=sealed)}"
        entries += "\tsealed.txt\n"
    tree = _git(bare, "mktree", stdin=entries)
    env = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    commit = _git(bare, *env, "commit-tree", tree, "-m", "record")
    _git(bare, "update-ref", f"refs/magi/runs/{RUN}", commit)
    return bare


def _config(agents: list[str]) -> Config:
    return Config.model_validate(
        {"agents": [{"id": a, "kind": "command", "command": ["true"]} for a in agents]}
    )


def _stalled(checkout: Path, **update: object) -> str:
    """The fixture run, an issue's, stalled in review after its tally, heads in ``checkout``."""
    head = _git(checkout, "rev-parse", "HEAD")
    r = fixture_run(RUN, status=RunStatus.STALLED, **update)
    r.task = r.task.model_copy(update={"source": "issue:7"})
    for c in r.candidates:
        c.head = head if c.head else None
    r.folded = True
    return text(r)


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Store, Git]:
    checkout = one_commit_repo(tmp_path / "checkout", {"README": "x"})
    return tmp_path, Store(tmp_path / "home"), Git.discover(checkout)


def _adopt(
    world: tuple[Path, Store, Git],
    record: str,
    agents: list[str] = AGENTS,
    sealed: str | None = None,
    host: str | None = None,
) -> Adopted | None:
    tmp, store, git = world
    return adopt(
        records=_records(tmp, record, sealed),
        run_id=RUN,
        issue=7,
        store=store,
        git=git,
        config=_config(agents),
        host=host,
    )


def test_after_the_tally_the_run_is_made_here_from_its_record(world) -> None:
    _, store, git = world
    adopted = _adopt(world, _stalled(git.root))
    assert adopted is not None
    assert adopted.run is not None
    run = store.load_run(RUN)
    assert Path(run.repo) == git.root
    assert git.rev_parse(f"refs/heads/{run.candidate('A').branch}") == run.candidate("A").head
    kept = store.run_dir(RUN) / "artifacts" / "judge-judge-1-t1.reply.md"
    assert kept.read_text() == "judge-1's transcript\n"
    assert any("carried on from refs/magi/runs/" in e.message for e in run.events)


def test_a_conversation_that_lives_on_this_runner_goes_on_and_the_others_start_afresh(
    world,
) -> None:
    """A stage lands on the runner that held judge-1's CLI session: it keeps it; impl-A's
    lives on another runner, so that seat is sent its full context. The record says which."""
    _, store, git = world
    r = Run.model_validate_json(_stalled(git.root))
    r.seats["judge-1"].session_id, r.seats["judge-1"].session_host = "s-judge", "box-1"
    r.seats["impl-A"].session_id, r.seats["impl-A"].session_host = "s-impl", "box-2"
    r.seats["impl-B"].session_id = "s-old"  # recorded before runners were named
    adopted = _adopt(world, text(r), host="box-1")
    assert adopted is not None
    assert adopted.run is not None
    seats = store.load_run(RUN).seats
    assert (seats["judge-1"].session_id, seats["judge-1"].session_host) == ("s-judge", "box-1")
    assert seats["impl-A"].session_id is None
    assert seats["impl-B"].session_id is None
    said = next(e.message for e in store.load_run(RUN).events if "carried on" in e.message)
    assert "judge-1 go on in their conversations, which live on this runner" in said
    assert "the conversations of impl-A, impl-B stayed on the runner that held them" in said


def test_off_a_runner_no_conversation_is_carried(world) -> None:
    _, store, git = world
    r = Run.model_validate_json(_stalled(git.root))
    r.seats["judge-1"].session_id, r.seats["judge-1"].session_host = "s-judge", "box-1"
    assert _adopt(world, text(r), host=None) is not None
    assert store.load_run(RUN).seats["judge-1"].session_id is None


def test_no_record_is_a_new_run_of_the_apps_id(world) -> None:
    tmp, store, git = world
    bare = tmp / "empty.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    got = adopt(records=bare, run_id=RUN, issue=7, store=store, git=git, config=_config(AGENTS))
    assert got is None


def test_before_the_tally_a_new_competition_and_why(world) -> None:
    _, store, git = world
    no_quorum = Tally(winner=None, counts={}, counted=[], judges=3, answered=0, quorum=False)
    adopted = _adopt(world, _stalled(git.root, tally=no_quorum))
    assert adopted is not None
    assert adopted.run is None
    assert "before its tally" in (adopted.fresh_because or "")
    assert not store.list_ids()


def test_a_seat_whose_agent_this_runner_lacks_is_named(world) -> None:
    _, store, git = world
    with pytest.raises(ActionError, match=r"seats' agents sonnet-agent are not in this runner"):
        _adopt(world, _stalled(git.root), agents=[a for a in AGENTS if a != "sonnet-agent"])
    assert not store.list_ids(), "nothing half made"


def test_a_winner_not_in_the_checkout_is_named(world) -> None:
    _, store, git = world
    record = _stalled(git.root).replace(_git(git.root, "rev-parse", "HEAD"), "f" * 40)
    with pytest.raises(ActionError, match=r"candidate A's head ffffffffffff"):
        _adopt(world, record)
    assert not store.list_ids()


def test_a_record_of_another_issue_is_refused(world) -> None:
    _, _, git = world
    with pytest.raises(ActionError, match="is not issue #7's"):
        _adopt(world, _stalled(git.root).replace('"issue:7"', '"issue:8"'))


def test_a_run_half_made_is_not_left_to_be_resumed(world, monkeypatch) -> None:
    """The record's artifacts could not be copied: no run is left in the store, locked or
    not, for the next retry to take for this runner's own."""
    from magi.action.agents_job import adopt as module

    def broken(*_a: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(module, "_write_artifacts", broken)
    _, store, git = world
    with pytest.raises(OSError, match="disk full"):
        _adopt(world, _stalled(git.root))
    assert not store.list_ids()
    assert not store.run_dir(RUN).exists()


def test_a_losers_missing_head_is_named_while_fold_has_yet_to_pin_it(world) -> None:
    _, store, git = world
    head = _git(git.root, "rev-parse", "HEAD")
    record = _stalled(git.root).replace('"folded": true', '"folded": false')
    record = record.replace(head, "e" * 40, 2)  # A's head stays: B's is gone
    record = record.replace("e" * 40, head, 1)
    with pytest.raises(ActionError, match=r"candidate B's head eeeeeeeeeeee"):
        _adopt(world, record)
    assert not store.list_ids()


def _pre_tally(checkout: Path) -> tuple[str, str]:
    """The run stalled before its tally: (its public copy, its whole record)."""
    whole = _stalled(checkout, tally=None).replace('"folded": true', '"folded": false')
    public = whole.replace('"opus-agent"', '"[redacted]"')
    return public, whole


def _sealed_for(
    store: Store, whole: str, base: str, bundle: bytes | None = None, **changes: object
) -> str:
    key = load_key(store.home) or new_key(store.home)
    members: dict[str, bytes] = {"run.json": whole.encode(), "artifacts/x.prompt.md": b"task\n"}
    if bundle is not None:
        members["candidates.bundle"] = bundle
    where = {"run_id": RUN, "issue": 7, "base": base, **changes}
    return seal(key, members, **where)  # type: ignore[arg-type]


def test_before_the_tally_a_sealed_copy_this_runner_can_open_is_carried_on(world) -> None:
    _, store, git = world
    public, whole = _pre_tally(git.root)
    base = fixture_run(RUN).base_sha or ""
    adopted = _adopt(world, public, sealed=_sealed_for(store, whole, base))
    assert adopted is not None
    assert adopted.run is not None
    run = store.load_run(RUN)
    assert run.base_sha == base
    assert "opus-agent" in {s.agent for s in run.seats.values()}, "the whole record, not the copy"
    assert (store.run_dir(RUN) / "artifacts" / "x.prompt.md").read_text() == "task\n"
    assert all(c.worktree for c in run.candidates), "trees where implement remakes them"
    (said,) = [e.message for e in run.events if "carried on from" in e.message]
    assert "its sealed copy, runner key" in said


def test_a_sealed_copy_that_was_changed_or_made_for_another_run_is_refused(world) -> None:
    _, store, git = world
    public, whole = _pre_tally(git.root)
    base = fixture_run(RUN).base_sha or ""
    good = _sealed_for(store, whole, base)
    head, body = good.splitlines()
    flipped = body[:40] + ("A" if body[40] != "A" else "B") + body[41:]
    with pytest.raises(ActionError, match="does not open as run"):
        _adopt(world, public, sealed=f"{head}\n{flipped}\n")
    with pytest.raises(ActionError, match="does not open as run"):
        _adopt(world, public, sealed=_sealed_for(store, whole, base, issue=8))
    with pytest.raises(ActionError, match="not a sealed run"):
        _adopt(world, public, sealed="hello\n")
    assert not store.list_ids(), "nothing made of any of them"


def test_a_sealed_copy_of_another_state_of_the_run_is_refused(world) -> None:
    _, store, git = world
    public, whole = _pre_tally(git.root)
    base = fixture_run(RUN).base_sha or ""
    older = whole.replace('"status": "stalled"', '"status": "asking"')
    with pytest.raises(ActionError, match="not the published record's run as it stopped"):
        _adopt(world, public, sealed=_sealed_for(store, older, base))


def test_without_the_key_or_with_another_a_new_competition_says_which(world, tmp_path) -> None:
    _, store, git = world
    public, whole = _pre_tally(git.root)
    base = fixture_run(RUN).base_sha or ""
    other = Store(tmp_path / "elsewhere")
    sealed = _sealed_for(other, whole, base)
    adopted = _adopt(world, public, sealed=sealed)
    assert adopted is not None
    assert "this runner holds no runner key" in (adopted.why or "")
    new_key(store.home)
    adopted = _adopt(world, public, sealed=sealed)
    assert adopted is not None
    assert "needs runner key" in (adopted.why or "")
    assert not store.list_ids()


def test_a_sealed_candidate_is_fetched_only_into_its_own_branch(world) -> None:
    """Whatever the sealed record names, nothing but ``magi/<run>/<label>`` is written."""
    _, store, git = world
    public, whole = _pre_tally(git.root)
    base = fixture_run(RUN).base_sha or ""
    hostile = whole.replace('"magi/20260830-153012-a1b2/A"', '"main"')
    with pytest.raises(ActionError, match="candidate A's branch is 'main'"):
        _adopt(world, public, sealed=_sealed_for(store, hostile, base, bundle=b"x"))
    assert not store.list_ids()


def test_a_clone_left_from_when_this_runner_held_the_run_is_put_on_the_recorded_head(
    world,
) -> None:
    """A stage that comes back to a runner finds the clone it made then, sound but behind
    the candidate's recorded head: the checks must not run on what the candidate was."""
    from magi.git import clones

    _, store, git = world
    older = git.rev_parse("HEAD")
    (git.root / "more.txt").write_text("more\n")
    _git(git.root, "add", "more.txt")
    _git(git.root, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "B")
    public, whole = _pre_tally(git.root)
    branch = Run.model_validate_json(whole).candidate("A").branch
    tree = store.home / "worktrees" / RUN / "A"
    clones.make_at(git, tree, branch=branch, sha=older)
    assert _git(tree, "rev-parse", "HEAD") == older
    base = fixture_run(RUN).base_sha or ""
    assert _adopt(world, public, sealed=_sealed_for(store, whole, base)) is not None
    head = store.load_run(RUN).candidate("A").head
    assert head == git.rev_parse("HEAD") != older
    assert _git(tree, "rev-parse", "HEAD") == head
    assert (tree / "more.txt").read_text() == "more\n"


def test_before_the_tally_the_carried_on_event_counts_seats_and_names_none(world) -> None:
    """Which seats' conversations live on which runner would tie a seat to a login."""
    _, store, git = world
    public, whole = _pre_tally(git.root)
    r = Run.model_validate_json(whole)
    r.seats["impl-A"].session_id, r.seats["impl-A"].session_host = "s-impl", "box-1"
    base = fixture_run(RUN).base_sha or ""
    assert _adopt(world, public, sealed=_sealed_for(store, text(r), base), host="box-1")
    said = next(e.message for e in store.load_run(RUN).events if "carried on" in e.message)
    assert "1 seat(s) go on in their conversations" in said
    assert "impl-A" not in said


def test_a_runner_that_only_seats_judges_carries_no_run_on(world, tmp_path) -> None:
    """Handed a run stopped before its tally (a misconfigured label), a runner that holds
    the panel key alone says so, rather than start a competition in the run's place."""
    _, store, git = world
    public, whole = _pre_tally(git.root)
    pool = Store(tmp_path / "pool")
    sealed = _sealed_for(pool, whole, fixture_run(RUN).base_sha or "")
    store.home.mkdir(parents=True, exist_ok=True)
    write_panel(pool.home, store.home / PANEL_FILE)
    with pytest.raises(ActionError, match="holds the panel key alone"):
        _adopt(world, public, sealed=sealed)
    assert not store.list_ids()
