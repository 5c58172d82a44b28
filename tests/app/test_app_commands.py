"""Comment commands over the App: accepted, refused, unknown."""

from __future__ import annotations

import asyncio

import pytest

from github_helpers import REPO, SEAL, deliver, issue_comment, labeled, make_app, pr_comment, world
from magi.core.threads import markers
from magi.testing.github import FakeGitHub


def started() -> FakeGitHub:
    """A world where issue 1 has a run (labeled, dispatched)."""
    fake = world(FakeGitHub())
    asyncio.run(deliver(make_app(fake), "issues", labeled()))
    return fake


def say(fake: FakeGitHub, body: str, **kw: object) -> list[str]:
    before = len(fake.comments_on(REPO, 1))
    asyncio.run(deliver(make_app(fake), "issue_comment", issue_comment(body, **kw)))  # type: ignore[arg-type]
    return fake.comments_on(REPO, 1)[before:]


def finished(fake: FakeGitHub) -> FakeGitHub:
    w = fake.world(REPO)
    for wid, r in w.runs.items():
        w.runs[wid] = r.model_copy(update={"status": "completed", "conclusion": "failure"})
    return fake


def test_retry_re_dispatches_the_run_with_a_reaction() -> None:
    """retry sends the run id back to the runner; the reaction is the answer."""
    fake = finished(started())
    run_id = fake.world(REPO).dispatches[0]["inputs"]["run_id"]
    assert say(fake, "/magi retry") == []
    last = fake.world(REPO).dispatches[-1]
    assert last["inputs"] == {
        "run_id": run_id,
        "issue": "1",
        "command": "compete",
        "runner-labels": '["self-hosted", "magi"]',  # [github] runner_labels, every dispatch
    }
    assert [r for r in fake.world(REPO).reactions if r[0] == "comment" and r[2] == "+1"]


def test_fold_deletes_the_runs_branches_itself_unless_its_pr_is_open() -> None:
    """fold needs no runner: the App deletes magi/<run>/* and says how many."""
    fake = finished(started())
    run_id = fake.world(REPO).dispatches[0]["inputs"]["run_id"]
    for label in ("A", "B"):
        fake.world(REPO).refs[f"heads/magi/{run_id}/{label}"] = "1" * 40
    dispatched = len(fake.world(REPO).dispatches)
    (reply,) = say(fake, "/magi fold")
    assert "deleted 2 branch(es)" in reply
    assert not [r for r in fake.world(REPO).refs if r.startswith(f"heads/magi/{run_id}/")]
    assert len(fake.world(REPO).dispatches) == dispatched, "no runner is dispatched for it"
    (again,) = say(fake, "/magi fold")
    assert "no branches left" in again


def test_fold_refuses_while_the_runs_pr_is_open() -> None:
    """Deleting an open PR's head would close it unreviewed: fold says to merge or close."""
    fake = finished(started())
    run_id = fake.world(REPO).dispatches[0]["inputs"]["run_id"]
    fake.world(REPO).refs[f"heads/magi/{run_id}/A"] = "1" * 40
    asyncio.run(
        fake.create_pull(
            REPO, title="t", head=f"magi/{run_id}/A", base="main", body="", draft=False
        )
    )
    (reply,) = say(fake, "/magi fold")
    assert "is open" in reply
    assert f"heads/magi/{run_id}/A" in fake.world(REPO).refs


def test_fold_is_not_blocked_by_a_strangers_fork_pr_named_like_the_run() -> None:
    """A stranger opens a fork PR from their own branch `magi/<run>/A`: it is not the run's
    PR (its head is the fork's), so fold deletes the run's branches anyway."""
    from magi.testing.github import branch_repo

    fake = finished(started())
    run_id = fake.world(REPO).dispatches[0]["inputs"]["run_id"]
    fake.world(REPO).refs[f"heads/magi/{run_id}/A"] = "1" * 40
    fork = branch_repo("stranger/Hello-World")
    fake.add_pull(REPO, 9, f"magi/{run_id}/A", "2" * 40, title="t", head_repo=fork)
    (reply,) = say(fake, "/magi fold")
    assert "deleted 1 branch(es)" in reply
    assert f"heads/magi/{run_id}/A" not in fake.world(REPO).refs


def test_council_and_review_dispatch_their_command() -> None:
    """Each runner command goes through the workflow's command input."""
    fake = finished(started())
    say(fake, "/magi council Which format?")
    assert fake.world(REPO).dispatches[-1]["inputs"]["command"] == "council"
    asyncio.run(deliver(make_app(fake), "issue_comment", pr_comment("/magi review", number=7)))
    assert fake.world(REPO).dispatches[-1]["inputs"]["command"] == "review"


def test_stop_cancels_the_workflow_run() -> None:
    """stop cancels the runner's workflow run and says the run is resumable."""
    fake = started()
    (wid,) = fake.world(REPO).runs
    (reply,) = say(fake, "/magi stop")
    assert fake.world(REPO).runs[wid].conclusion == "cancelled"
    assert "resumes" in reply


def test_status_and_stats_reply_with_figures() -> None:
    """status names the run and its runner; stats answers from the run records."""
    fake = started()
    run_id = fake.world(REPO).dispatches[0]["inputs"]["run_id"]
    fake.world(REPO).refs[f"heads/magi/{run_id}/A"] = "1" * 40
    (status,) = say(fake, "/magi status")
    assert run_id in status
    assert "queued" in status
    (stats,) = say(fake, "/magi stats")
    assert "**0 recorded runs.**" in stats, "nothing published a record yet (test_app_records)"


def test_a_command_with_no_run_is_refused_with_the_reason() -> None:
    """retry before any run: a reply quoting the command and saying what is missing."""
    fake = world(FakeGitHub())
    (reply,) = say(fake, "/magi retry")
    assert reply.startswith("> /magi retry\n")
    assert "no magi run has started" in reply
    assert fake.world(REPO).dispatches == []


def test_a_non_writers_command_is_refused_and_says_who_may() -> None:
    """A reader's command is quoted back with who may run it."""
    fake = started()
    fake.world(REPO).permissions["reader"] = "read"
    (reply,) = say(fake, "/magi stop", login="reader")
    assert "> /magi stop\n" in reply
    assert "write, maintain or admin" in reply
    assert not fake.named("cancel_workflow_run")


def test_an_unknown_command_gets_the_list() -> None:
    """/magi deploy: a short reply with the known commands and the help folded."""
    fake = started()
    (reply,) = say(fake, "/magi deploy")
    assert "`retry`" in reply
    assert "<details>" in reply


def test_plain_comments_get_nothing() -> None:
    """Prose mentioning /magi in a sentence is not a command."""
    fake = started()
    assert say(fake, "I think /magi retry would help") == []


def test_a_command_on_the_pr_acts_on_the_issue_it_came_from() -> None:
    """On a magi PR, the run is found on the issue named in the PR body."""
    fake = finished(started())
    body = SEAL.marker(markers.PR, issue=1, run="r")
    fake.add_pull(REPO, 7, "magi/r/A", "a" * 40, body=body)
    asyncio.run(deliver(make_app(fake), "issue_comment", pr_comment("/magi retry", number=7)))
    assert fake.world(REPO).dispatches[-1]["inputs"]["run_id"]
    assert fake.world(REPO).dispatches[-1]["inputs"]["issue"] == "1"


def test_retry_while_the_runner_is_busy_is_refused() -> None:
    """A run still queued or running is not dispatched a second time."""
    fake = started()
    (reply,) = say(fake, "/magi retry")
    assert "still queued" in reply
    assert len(fake.world(REPO).dispatches) == 1


def test_a_failed_dispatch_is_a_refusal_reply() -> None:
    """retry whose workflow is gone says so."""
    fake = finished(started())
    fake.world(REPO).workflows.clear()
    (reply,) = say(fake, "/magi retry")
    assert "could not be started" in reply


def test_a_redelivered_command_runs_once() -> None:
    """The same /magi stop delivered twice cancels once and replies once."""
    fake = started()
    app = make_app(fake)
    payload = issue_comment("/magi stop")

    async def twice() -> None:
        await asyncio.gather(*(deliver(app, "issue_comment", payload) for _ in range(3)))

    asyncio.run(twice())
    assert len(fake.named("cancel_workflow_run")) == 1
    assert sum("Stopped" in c for c in fake.comments_on(REPO, 1)) == 1


def _asking(fake: FakeGitHub, *asked: tuple[str, list[str]], status: str = "asking") -> str:
    """The run's record as publish left it: parked on the questions ``asked`` (id, choices)."""
    from datetime import UTC, datetime

    from github_helpers import store_record
    from magi.model.run import Question, QuestionTurn, RunStatus
    from record_helpers import run, text

    run_id = fake.world(REPO).dispatches[0]["inputs"]["run_id"]
    now = datetime(2026, 9, 1, tzinfo=UTC)
    questions = [
        Question(
            id=qid,
            box=qid,
            seat=f"impl-{label}",
            node="implement",
            turn=1,
            label=label,
            status="waiting",
            turns=[QuestionTurn(summary="Which storage backend?", choices=choices, asked_at=now)],
        )
        for (qid, choices), label in zip(asked, "AB", strict=False)
    ]
    record = run(run_id, status=RunStatus(status), questions=questions)
    store_record(fake, text(record), run_id)
    return run_id


def test_answer_dispatches_the_run_again_with_the_comment_to_read() -> None:
    """The words stay in the comment: the runner reads them by id, as it does a council's."""
    fake = finished(started())
    run_id = _asking(fake, ("ab12", ["SQLite", "Redis"]))
    p = issue_comment("Thanks!\n/magi answer redis", comment_id=7777)
    asyncio.run(deliver(make_app(fake), "issue_comment", p))
    last = fake.world(REPO).dispatches[-1]["inputs"]
    assert (last["run_id"], last["command"], last["comment"]) == (run_id, "compete", "7777")
    assert [r for r in fake.world(REPO).reactions if r[0] == "comment" and r[2] == "+1"]


@pytest.mark.parametrize(
    ("asked", "status", "words", "why"),
    [
        ([("ab12", ["SQLite"])], "judging", "/magi answer SQLite", "is judging, not waiting"),
        ([("ab12", ["SQLite"]), ("cd34", [])], "asking", "/magi answer x", "name one first"),
        ([("ab12", ["SQLite"])], "asking", "/magi answer", "write it after `/magi answer`"),
    ],
    ids=["not-asking", "which-question", "no-words"],
)
def test_an_answer_magi_cannot_place_is_refused_with_the_reason(asked, status, words, why) -> None:
    fake = finished(started())
    _asking(fake, *asked, status=status)
    dispatched = len(fake.world(REPO).dispatches)
    (reply,) = say(fake, words)
    assert "magi did not run this" in reply
    assert why in reply
    assert len(fake.world(REPO).dispatches) == dispatched


def test_a_non_writers_answer_is_refused_and_dispatches_nothing() -> None:
    fake = finished(started())
    _asking(fake, ("ab12", ["SQLite"]))
    dispatched = len(fake.world(REPO).dispatches)
    (reply,) = say(fake, "/magi answer SQLite", login="drive-by")
    assert "only people with write" in reply
    assert len(fake.world(REPO).dispatches) == dispatched


def test_one_answer_per_comment_and_none_on_a_pull_request() -> None:
    """The runner reads a comment's first answer: a second in it is refused, not dispatched."""
    fake = finished(started())
    _asking(fake, ("ab12", ["SQLite"]), ("cd34", ["Redis"]))
    dispatched = len(fake.world(REPO).dispatches)
    (reply,) = say(fake, "/magi answer ab12 SQLite\n/magi answer cd34 Redis")
    assert "one answer per comment" in reply
    assert len(fake.world(REPO).dispatches) == dispatched + 1
    assert fake.world(REPO).dispatches[-1]["inputs"]["command"] == "compete"


def test_an_answer_on_the_pull_request_is_refused_where_the_runner_cannot_read_it() -> None:
    """The runner reads the issue's comments: an answer on a PR thread would never arrive."""
    fake = finished(started())
    _asking(fake, ("ab12", ["SQLite"]))
    body = SEAL.marker(markers.PR, issue=1, run="r")
    fake.add_pull(REPO, 7, "magi/r/A", "a" * 40, body=body)
    dispatched = len(fake.world(REPO).dispatches)
    asyncio.run(deliver(make_app(fake), "issue_comment", pr_comment("/magi answer SQLite")))
    (reply,) = fake.comments_on(REPO, 7)
    assert "answer on the issue the question was posted on" in reply
    assert len(fake.world(REPO).dispatches) == dispatched


def _stages(fake: FakeGitHub) -> tuple[str, list[int]]:
    """The App's run ended its first workflow run handed off; publish dispatched a forked
    wave's two seat jobs since (as publish_job does: titles name the run, not the App)."""
    finished(fake)
    run_id = fake.world(REPO).dispatches[0]["inputs"]["run_id"]
    seat_jobs = []
    for labels in ('["self-hosted", "magi"]', '["self-hosted", "gpu"]'):
        inputs = {"issue": "1", "run_id": run_id, "command": "compete", "stage": "fork"}
        inputs["runner-labels"] = labels
        sent = asyncio.run(fake.dispatch_workflow(REPO, "magi.yml", "main", inputs))
        assert sent.workflow_run_id is not None
        seat_jobs.append(sent.workflow_run_id)
    return run_id, seat_jobs


def test_stop_status_and_retry_see_the_stages_publish_dispatched() -> None:
    """The acknowledgement names the first workflow run only: a run handed on lives in
    others. status reports the latest, retry is refused while any runs, and stop cancels
    every one of them (a forked wave's seat jobs run side by side)."""
    fake = started()
    run_id, seat_jobs = _stages(fake)
    (status,) = say(fake, "/magi status")
    assert f"magi run `{run_id}`" in status
    assert f"runs/{max(seat_jobs)}" in status
    assert "queued" in status
    (retry,) = say(fake, "/magi retry")
    assert "is still queued" in retry
    (stop,) = say(fake, "/magi stop")
    assert "Stopped the 2 runners of magi run" in stop
    runs = fake.world(REPO).runs
    assert [runs[w].conclusion for w in seat_jobs] == ["cancelled", "cancelled"]
    (again,) = say(fake, "/magi stop")
    assert "already finished (cancelled)" in again


def test_a_workflow_run_that_names_another_run_is_not_this_ones() -> None:
    """Another run's stage, or this run's council (a council names the run too): neither
    is stopped by this run's `/magi stop`."""
    fake = started()
    finished(fake)
    run_id = fake.world(REPO).dispatches[0]["inputs"]["run_id"]
    other = {"issue": "1", "run_id": "20260101-000000-ffff", "command": "compete"}
    asyncio.run(fake.dispatch_workflow(REPO, "magi.yml", "main", other))
    council = {"issue": "1", "run_id": run_id, "command": "council", "comment": "9"}
    asyncio.run(fake.dispatch_workflow(REPO, "magi.yml", "main", council))
    (stop,) = say(fake, "/magi stop")
    assert "already finished" in stop
    assert [r for r in fake.world(REPO).runs.values() if r.status == "queued"]


def test_stop_of_a_run_that_finished_meanwhile_replies_that_it_finished() -> None:
    """The run ends between the list and the cancel: GitHub's 409 is said, not swallowed."""
    fake = started()
    cancel = fake.cancel_workflow_run

    async def finished_first(repo, run_id):  # type: ignore[no-untyped-def]
        w = fake.world(repo)
        w.runs[run_id] = w.runs[run_id].model_copy(
            update={"status": "completed", "conclusion": "success"}
        )
        return await cancel(repo, run_id)

    fake.cancel_workflow_run = finished_first  # type: ignore[method-assign]
    (reply,) = say(fake, "/magi stop now")
    assert "already finished" in reply
    assert "Stopped" not in reply
