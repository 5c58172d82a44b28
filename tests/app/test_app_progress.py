"""workflow_job over the App: the issue's one tracking comment follows magi's jobs."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from github_helpers import NOW, REPO, SEAL, deliver, fixture, make_app, world
from magi.github.models import Comment, User, WorkflowJob
from magi.testing.github import APP_LOGIN, FakeGitHub

RUN = 4747967848
TITLE = "magi compete, issue #1, run 20260101-120000-0001"


def scene(title: str = TITLE, **run: Any) -> FakeGitHub:
    fake = world(FakeGitHub())
    fake.add_run(REPO, RUN, title, head_sha="c" * 40, **run)
    fake.set_job(REPO, RUN, WorkflowJob(id=1, name="Read the issue", status="queued"))
    return fake


def job_event(action: str = "queued", **job: Any) -> dict[str, Any]:
    p = fixture(f"workflow_job.{action}")
    p["repository"]["full_name"] = REPO.full_name
    p["repository"]["default_branch"] = "main"
    p["workflow_job"].update({"run_id": RUN, "workflow_name": "magi", **job})
    p["sender"].update({"login": APP_LOGIN, "type": "Bot"})  # the App dispatched the run
    return p


def send(fake: FakeGitHub, action: str = "queued", **job: Any) -> str:
    r = asyncio.run(deliver(make_app(fake), "workflow_job", job_event(action, **job)))
    assert r.status_code == 200
    return str(r.json()["status"])


def tracking(fake: FakeGitHub) -> list[Comment]:
    return [
        c
        for c in fake.world(REPO).comments.get(1, [])
        if SEAL.find([c.body], "tracking", issue="1")
    ]


def test_the_first_job_creates_the_tracking_comment_and_later_ones_edit_it():
    """Queued -> in progress -> done: one comment, edited in place, each job with its log."""
    fake = scene()
    assert send(fake) == "done"
    [made] = tracking(fake)
    assert "- [ ] Read the issue: queued" in made.body
    assert "20260101-120000-0001" in made.body
    t0 = NOW - timedelta(seconds=40)
    fake.set_job(
        REPO,
        RUN,
        WorkflowJob(
            id=1,
            name="Read the issue",
            status="completed",
            conclusion="success",
            started_at=t0,
            completed_at=NOW,
            html_url="https://github.example/job/1",
        ),
    )
    fake.set_job(
        REPO,
        RUN,
        WorkflowJob(
            id=2,
            name="Compete (agents, no credential)",
            status="in_progress",
            html_url="https://github.example/job/2",
        ),
    )
    send(fake, "in_progress")
    [edited] = tracking(fake)
    assert edited.id == made.id
    assert "- [x] Read the issue: success, 40s · [log](https://github.example/job/1)" in edited.body
    assert "Compete (agents, no credential): in progress · [live log]" in edited.body
    assert len(fake.named("create_comment")) == 1
    assert len(fake.named("update_comment")) == 1


def test_what_publish_wrote_stays_and_its_marker_keeps_the_attempts():
    """The App replaces only its jobs part: publish's checklist and the spent count stay."""
    fake = scene()
    mark = SEAL.marker("tracking", issue=1, run="r0", spent=1, counted="r0")
    body = f"### magi\n\nRun `r0`: **failed**\n\n- [x] compete (3s)\n\n{mark}"
    fake.world(REPO).comments[1] = [
        Comment(id=77, body=body, user=User(login=APP_LOGIN, type="Bot"))
    ]
    send(fake)
    [c] = tracking(fake)
    assert c.id == 77
    assert c.body.startswith("### magi\n\nRun `r0`: **failed**")
    assert "Read the issue: queued" in c.body
    assert SEAL.latest([c.body], "tracking") == {
        "issue": "1",
        "run": "r0",
        "spent": "1",
        "counted": "r0",
    }
    assert send(fake) == "done"
    assert len(fake.named("update_comment")) == 1  # the same picture is not written twice


def test_a_persons_comment_quoting_the_marker_is_never_edited():
    """Only the App's own comment counts: a quoted marker from a person is left alone."""
    fake = scene()
    quoted = Comment(id=5, body=SEAL.marker("tracking", issue=1), user=User(login="mallory"))
    fake.world(REPO).comments[1] = [quoted]
    send(fake)
    assert fake.world(REPO).comments[1][0] == quoted
    assert len(tracking(fake)) == 2


def test_racing_deliveries_create_one_comment():
    """Several jobs queue at once: of the deliveries racing to create it, one does."""
    fake = scene()
    app = make_app(fake)

    async def all_at_once() -> None:
        await asyncio.gather(*(deliver(app, "workflow_job", job_event()) for _ in range(4)))

    asyncio.run(all_at_once())
    assert len(tracking(fake)) == 1


def test_jobs_of_other_workflows_cost_nothing_or_are_left_alone():
    """Another workflow's name: ignored before any call; another file or title: no comment."""
    fake = scene()
    assert send(fake, workflow_name="CI") == "ignored"
    assert fake.calls == []
    other_file = scene(path=".github/workflows/ci.yml@main")
    send(other_file)
    assert tracking(other_file) == []
    other_title = scene(title="Update README.md")
    send(other_title)
    assert tracking(other_title) == []
    landing = scene(title="magi land, issue #1, PR #7")
    send(landing)
    assert tracking(landing) == []


def test_an_older_payload_without_workflow_name_is_still_read():
    """workflow_job.in_progress.json predates workflow_name: the run's title decides."""
    fake = scene()
    p = job_event("in_progress")
    del p["workflow_job"]["workflow_name"]
    asyncio.run(deliver(make_app(fake), "workflow_job", p))
    assert len(tracking(fake)) == 1


def test_a_forged_run_of_magis_workflow_path_edits_and_creates_nothing():
    """A fork PR's own .github/workflows/magi.yml runs at magi's path with any run-name it
    likes; only runs of events that run the default branch's workflow are magi's."""
    for event in ("pull_request", "pull_request_target", "push", ""):
        fake = scene(event=event)
        mine = Comment(
            id=9,
            body="magi is on it\n\n" + SEAL.marker("tracking", issue=1),
            user=User(login=APP_LOGIN),
        )
        fake.world(REPO).comments[1] = [mine]
        send(fake)
        assert fake.world(REPO).comments[1] == [mine], event
        assert fake.named("create_comment") == [], event
        assert fake.named("update_comment") == [], event
        assert fake.named("create_ref") == [], event
    for event in ("workflow_dispatch", "issues", "issue_comment", "workflow_run"):
        fake = scene(event=event)
        send(fake)
        assert len(tracking(fake)) == 1, event
