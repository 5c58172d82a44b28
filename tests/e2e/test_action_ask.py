"""An agent asks on a runner: the run parks ``asking``, publish puts the question on the issue,
and a writer's ``/magi answer`` resumes that seat alone, in its own clone, to the end.

compete runs as its own process (the agents job: no credential, no person within reach);
publish runs in-process against the GitHub double, as the workflow's steps do.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from action_helpers import IMPLEMENTERS, ISSUE, JUDGES, REPO, World, make_world
from graph_helpers import calls, git_out
from magi.model.run import RunStatus
from magi.state.store import Store, parse_record
from magi.testing.cli import invoke


def _run_id(world: World) -> str:
    out = (world.tmp / "runner-temp-compete" / "output").read_text()
    found = re.findall(r"^run-id=(\S+)$", out, re.M)
    assert found, out
    return found[-1]


def _comments_file(
    world: World, *bodies: tuple[int, str], at: str = "2099-01-01T00:00:00Z"
) -> None:
    """The task job's issue/comments.json, beside the issue file compete reads."""
    world.issue_file()
    rows = [
        {"id": cid, "body": body, "user": {"login": "maintainer"}, "created_at": at}
        for cid, body in bodies
    ]
    (world.tmp / "comments.json").write_text(json.dumps(rows))


def _asked(tmp: Path) -> tuple[World, str]:
    """Candidate A's seat (``ask:right``) asks which backend; the other works as usual."""
    world = make_world(tmp, implementers=("ask:right", "wrong"))
    res = world.compete()
    assert res.returncode == 0, res.stdout + res.stderr
    (world.tmp / "compete.log").write_text(res.stdout + res.stderr)  # the job's public log
    return world, _run_id(world)


@pytest.fixture(scope="module")
def asked(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, str]:
    """One parked run for the tests that only look (and publish, which changes no record);
    the tests that answer park a run of their own (xdist may run them in any order)."""
    return _asked(tmp_path_factory.mktemp("ask"))


def test_the_run_parks_asking_with_every_other_seats_turn_kept(asked) -> None:
    world, run_id = asked
    run = Store(world.home).load_run(run_id)
    assert run.status is RunStatus.ASKING, run.reason
    (q,) = run.questions
    assert (q.node, q.status) == ("implement", "waiting")
    assert q.turns[0].summary == "Which storage backend?"
    assert q.turns[0].choices == ["SQLite", "Redis"]
    assert q.label in run.reason
    assert q.id in run.reason
    assert "judge" not in {t.node for t in run.turns}, "nothing is judged before the answer"
    asker = next(c for c in run.candidates if c.seat == q.seat)
    other = next(c for c in run.candidates if c.seat != q.seat)
    assert other.status == "ok", "the seat that did not ask is done and kept"
    assert other.head
    told = git_out(world.repo, "show", f"{asker.head}:asked.txt")
    assert "end your turn here" in told, "magi ask told the agent to stop, not to wait"


def test_publish_puts_the_question_on_the_issue_naming_no_agent(asked, monkeypatch) -> None:
    world, run_id = asked
    res = world.publish(monkeypatch, run_id)
    assert res.exit_code == 0, res.output
    posted = world.github.comments_on(REPO, ISSUE)
    (question,) = [c for c in posted if "### magi asks" in c]
    run = Store(world.home).load_run(run_id)
    (q,) = run.questions
    assert f"implement · {q.label} asked (question `{q.id}`)" in question
    assert "> Which storage backend?" in question
    assert "1. SQLite" in question
    assert "2. Redis" in question
    assert "/magi answer" in question
    assert not [n for n in (*IMPLEMENTERS, *JUDGES) if n in " ".join(posted)]
    assert not world.github.named("create_pull"), "no pull request while the run waits"
    (tracking,) = [c for c in posted if "### magi" in c and "asks" not in c]
    assert "**asking**" in tracking
    assert "/magi answer" in tracking
    again = world.publish(monkeypatch, run_id)
    assert again.exit_code == 0, again.output
    assert world.github.comments_on(REPO, ISSUE) == posted, "publishing twice posts nothing new"


def test_what_leaves_the_runner_before_the_tally_cannot_be_traced_to_an_author(
    asked, monkeypatch
) -> None:
    """The parked run's artifact (downloadable) and the record ref publish writes (readable)
    hold neither the seed, which with the committed ``[roles] implementers`` order gave
    every label's author, nor an implementer seat's agent, nor its CLI's raw output."""
    world, run_id = asked
    run = Store(world.home).load_run(run_id)
    assert run.seed != 0, "the local record keeps its seed (a seed of 0 proves nothing)"
    res = world.publish(monkeypatch, run_id)
    assert res.exit_code == 0, res.output
    ref = world.remote_refs()[f"refs/magi/runs/{run_id}"]
    stored = git_out(world.remote, "cat-file", "blob", f"{ref}:run.json")
    names = git_out(world.remote, "ls-tree", "-r", "--name-only", ref)
    # ... and it is still a record every reader takes (day_usd, stats, another runner):
    # gated again with the aliases as names, its agent ids had become "[redacted]".
    parse_record(stored, path=Path(f"{ref}:run.json"), run_id=run_id)
    for record, files in (
        ((world.artifact / "run.json").read_text(), os.listdir(world.artifact / "artifacts")),
        (stored, names.splitlines()),
    ):
        published = json.loads(record)
        assert published["seed"] == 0
        for c in run.candidates:
            assert published["seats"][c.seat]["agent"] == "[redacted]"
            assert not [f for f in files if f"-{c.seat}-" in f and f.endswith(".raw.txt")]
        assert [f for f in files if f.endswith(".prompt.md")], "magi's own prompts still go"
    # The job's log is as public: no seed, and implementer seats end unnamed (when and in
    # what order they end would tell them apart).
    log = (world.tmp / "compete.log").read_text()
    assert f"seed {run.seed}" not in log
    assert "seed withheld until the tally" in log
    assert "an implementer seat: ok" in log
    assert not re.search(r"impl-[AB]: (ok|error|timeout|quota)", log), log


def test_magi_answer_on_the_runners_machine_lists_the_waiting_question(asked) -> None:
    world, run_id = asked
    (q,) = Store(world.home).load_run(run_id).questions
    listed = invoke(["answer"], env={"MAGI_HOME": str(world.home)})
    assert listed.exit_code == 0, listed.output
    assert f"{q.id}  run {run_id} · implement · {q.label}: Which storage backend?" in listed.output


def test_a_writers_answer_resumes_only_the_asking_seat_to_the_end(tmp_path, monkeypatch) -> None:
    world, run_id = _asked(tmp_path)
    _comments_file(world, (11, "thanks, looking"))
    res = world.compete("--run-id", run_id, "--answer-comment", "11")
    assert res.returncode != 0, "a comment that answers nothing is refused"
    assert "holds no /magi answer" in res.stdout + res.stderr
    _comments_file(world, (10, "/magi answer SQLite"), at="2000-01-01T00:00:00Z")
    res = world.compete("--run-id", run_id, "--answer-comment", "10")
    assert res.returncode != 0, "an answer written before the question was asked is refused"
    assert "written before question" in res.stdout + res.stderr
    before = Store(world.home).load_run(run_id)
    assert before.status is RunStatus.ASKING, "and it changes nothing"
    (q,) = before.questions
    asked_before = Counter((c["seat"], c["node"]) for c in calls(world.scripted))
    _comments_file(world, (12, "Good question.\n/magi answer redis"))
    res = world.compete("--run-id", run_id, "--answer-comment", "12")
    assert res.returncode == 0, res.stdout + res.stderr
    run = Store(world.home).load_run(run_id)
    assert run.status is RunStatus.READY, run.reason
    (done,) = run.questions
    assert done.status == "answered"
    assert (done.turns[0].how, done.turns[0].answer) == ("choice", "Redis")
    asked_now = Counter((c["seat"], c["node"]) for c in calls(world.scripted))
    again = {
        s
        for (s, node), n in asked_now.items()
        if node == "implement" and n > asked_before[(s, node)]
    }
    assert again == {q.seat}, "only the asking seat is asked again at implement"
    asker = next(c for c in run.candidates if c.seat == q.seat)
    assert git_out(world.repo, "show", f"{asker.head}:backend.txt") == "Redis\n"
    assert git_out(world.repo, "show", f"{asker.head}:asked.txt"), "its first turn's work stays"
    prompt = [t for t in run.turns if t.seat == q.seat and t.node == "implement"][-1]
    sent = (Store(world.home).run_dir(run_id) / prompt.prompt_artifact).read_text()
    assert "# The answer to your question" in sent
    assert "> Redis" in sent
    res = world.publish(monkeypatch, run_id)
    assert res.exit_code == 0, res.output
    assert world.github.named("create_pull"), "the run goes on to its pull request"


def test_answered_on_the_runners_machine_a_local_resume_carries_the_seat_on(tmp_path) -> None:
    world, run_id = _asked(tmp_path)
    (q,) = Store(world.home).load_run(run_id).questions
    env = {"MAGI_HOME": str(world.home)}
    given = invoke(["answer", q.id, "2"], env=env)
    assert given.exit_code == 0, given.output
    assert f"magi run --resume {run_id} carries that seat on" in given.output
    again = invoke(["answer", q.id, "1"], env=env)
    assert again.exit_code == 4, "a question is answered once"
    resumed = subprocess.run(
        [sys.executable, "-m", "magi", "run", "--resume", run_id],
        cwd=world.repo,
        env={**os.environ, **env, "MAGI_CONFIG_DIR": str(tmp_path / "none")},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    run = Store(world.home).load_run(run_id)
    assert run.status is RunStatus.READY, run.reason
    asker = next(c for c in run.candidates if c.seat == q.seat)
    assert git_out(world.repo, "show", f"{asker.head}:backend.txt") == "Redis\n"


def test_killed_during_the_answers_turn_the_resume_gives_that_turn_again(tmp_path) -> None:
    """kill -9 right after the seat's answer turn was recorded, its node not yet: the answer
    is kept, and the resume (a plain retry, no answer again) carries it from the same head."""
    world, run_id = _asked(tmp_path)
    (q,) = Store(world.home).load_run(run_id).questions
    first_head = next(
        c.head for c in Store(world.home).load_run(run_id).candidates if c.seat == q.seat
    )
    _comments_file(world, (13, "/magi answer Redis"))
    killed = world.compete(
        "--run-id",
        run_id,
        "--answer-comment",
        "13",
        env={"MAGI_FAILPOINT": f"turn:{q.seat}:implement"},
    )
    assert killed.returncode == -9, killed.stdout + killed.stderr
    mid = Store(world.home).load_run(run_id)
    (taken,) = mid.questions
    assert (taken.status, taken.turns[0].answer) == ("waiting", "Redis"), "taken, not carried yet"
    res = world.compete("--run-id", run_id)
    assert res.returncode == 0, res.stdout + res.stderr
    run = Store(world.home).load_run(run_id)
    assert run.status is RunStatus.READY, run.reason
    assert run.questions[0].status == "answered"
    turns = [t for t in run.turns if t.seat == q.seat and t.node == "implement"]
    assert len(turns) == 3, "asked, the killed answer turn, and that turn again"
    asker = next(c for c in run.candidates if c.seat == q.seat)
    assert git_out(world.repo, "merge-base", "--is-ancestor", first_head, asker.head) == ""
    assert git_out(world.repo, "show", f"{asker.head}:backend.txt") == "Redis\n"


def test_every_writers_answer_on_the_thread_is_delivered_when_one_dispatch_replaced_another(
    tmp_path,
) -> None:
    """Two seats ask; two writers' answers come while the runner is busy, and GitHub keeps
    only the last dispatch (a newer pending run replaces the older). The run it starts
    delivers both answers; a reader's answer, and a bot's, are not delivered."""
    world = make_world(tmp_path, implementers=("ask:right", "ask:wrong"))
    res = world.compete()
    assert res.returncode == 0, res.stdout + res.stderr
    run_id = _run_id(world)
    record = Store(world.home).load_run(run_id)
    assert record.status is RunStatus.ASKING
    first, second = sorted(q.id for q in record.questions)
    world.issue_file()
    at = "2099-01-01T00:00:00Z"
    rows = [
        {"id": 30, "body": f"/magi answer {first} redis", "user": {"login": "passerby"}},
        {"id": 31, "body": f"/magi answer {first} sqlite", "user": {"login": "maintainer"}},
        {"id": 32, "body": f"/magi answer {second} 1", "user": {"login": "magi-app[bot]"}},
        {"id": 33, "body": f"/magi answer {second} redis", "user": {"login": "Other-Writer"}},
    ]
    (world.tmp / "comments.json").write_text(json.dumps([{**r, "created_at": at} for r in rows]))
    perms = {"passerby": "read", "maintainer": "write", "Other-Writer": "admin"}
    (world.tmp / "permissions.json").write_text(json.dumps(perms))
    res = world.compete("--run-id", run_id, "--answer-comment", "33")  # 31's was replaced
    assert res.returncode == 0, res.stdout + res.stderr
    assert "delivered 2 answers from the thread" in res.stdout + res.stderr
    run = Store(world.home).load_run(run_id)
    assert run.status is RunStatus.READY, run.reason
    got = {q.id: (q.status, q.turns[0].answer) for q in run.questions}
    assert got == {first: ("answered", "SQLite"), second: ("answered", "Redis")}


def test_without_the_authors_permissions_only_the_dispatched_answer_is_delivered(tmp_path):
    """A workflow from before permissions.json: the App-checked comment alone, as before."""
    world = make_world(tmp_path, implementers=("ask:right", "ask:wrong"))
    assert world.compete().returncode == 0
    run_id = _run_id(world)
    first, second = sorted(q.id for q in Store(world.home).load_run(run_id).questions)
    _comments_file(world, (40, f"/magi answer {first} sqlite"), (41, f"/magi answer {second} 2"))
    res = world.compete("--run-id", run_id, "--answer-comment", "41")
    assert res.returncode == 0, res.stdout + res.stderr
    run = Store(world.home).load_run(run_id)
    assert run.status is RunStatus.ASKING, "the other question still waits"
    assert {q.id: q.status for q in run.questions} == {first: "waiting", second: "answered"}


def test_the_task_job_reads_the_permission_of_every_answers_author(tmp_path) -> None:
    """The read step's own shell, with a stand-in ``gh``: one permission lookup per human
    author of a /magi answer, a login that is not a login never reaches a URL."""
    import shutil

    if shutil.which("jq") is None:
        pytest.skip("jq is not installed (GitHub's runners have it)")
    from action_workflow_helpers import step_script

    script = step_script("task", "Read the issue, its comments and the sender's permission")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    comments = [
        {"id": 1, "body": "/magi answer q1 redis", "user": {"login": "alice", "type": "User"}},
        {"id": 2, "body": "thanks", "user": {"login": "bob", "type": "User"}},
        {"id": 3, "body": "/MAGI  answer q2 x", "user": {"login": "carol", "type": "User"}},
        {"id": 4, "body": "/magi answer 1", "user": {"login": "magi-app[bot]", "type": "Bot"}},
        {"id": 5, "body": "/magi answer q1 y", "user": {"login": "alice", "type": "User"}},
    ]
    (tmp_path / "comments.json").write_text(json.dumps(comments))
    asked = tmp_path / "asked"
    (bindir / "gh").write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in repos/*) path=$a;; esac; done\n'
        f'echo "$path" >> "{asked}"\n'
        'case "$path" in\n'
        f'  */comments) cat "{tmp_path}/comments.json";;\n'
        "  */collaborators/alice/permission) echo write;;\n"
        "  */collaborators/*/permission) exit 1;;\n"
        "  *) echo '{}';;\n"
        "esac\n"
    )
    (bindir / "gh").chmod(0o755)
    env = {
        "PATH": f"{bindir}:{os.environ['PATH']}",
        "GITHUB_REPOSITORY": "acme/widgets",
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "ISSUE": "7",
        "EVENT": "workflow_dispatch",
        "SENDER": "alice",
    }
    res = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 0, res.stderr
    perms = json.loads((tmp_path / "issue" / "permissions.json").read_text())
    assert perms == {"alice": "write", "carol": "none"}
    looked = [a for a in asked.read_text().split() if "/collaborators/" in a]
    assert sorted(looked) == [
        "repos/acme/widgets/collaborators/alice/permission",
        "repos/acme/widgets/collaborators/carol/permission",
    ]
