"""A landing job that crashed gives back refs/magi/land/<pr>/<head>: landing never wedges."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from github_helpers import NOW, REPO, deliver, fixture, make_app
from magi.app.land_lock import STALE
from magi.core import markers
from magi.core.progress import RunTitle, title
from magi.github.models import Comment, User
from magi.testing.github import APP_LOGIN
from test_app_landing import PR, SHA, dispatches, scene, wake

LOCK = f"magi/land/{PR}/{SHA}"


def job(conclusion: str, name: str = f"Fix round (agents, no credential) [magi land #{PR}]"):
    p: dict[str, Any] = fixture("workflow_job.completed")
    p["repository"].update(full_name=REPO.full_name, default_branch="main")
    p["workflow_job"].update(conclusion=conclusion, name=name)
    p["sender"].update(login=APP_LOGIN, type="Bot")  # the App dispatched the workflow
    return p


RUN_ID = fixture("workflow_job.completed")["workflow_job"]["run_id"]


def landing_run(fake: Any, event: str = "workflow_dispatch", pr: int = PR) -> None:
    """The job's workflow run as GitHub shows it: magi's workflow, dispatched to land ``pr``."""
    fake.add_run(REPO, RUN_ID, title(RunTitle("land", 1, pr=pr, run="r1")), event=event)


def crashed_round():
    """A red head, its fix round dispatched (the lock taken), and the job never pushed."""
    fake = scene()
    landing_run(fake)
    fake.set_check(REPO, SHA, "ci", "completed", "failure")
    wake(fake)
    assert len(dispatches(fake)) == 1
    assert LOCK in fake.world(REPO).refs
    return fake


def test_a_failed_landing_job_releases_its_lock_and_the_next_event_dispatches():
    """workflow_job completed/failure for `[magi land #7]`: the lock goes, the PR is told,
    nothing is dispatched by the release itself, and the next event on the head is."""
    fake = crashed_round()
    wake(fake)
    assert len(dispatches(fake)) == 1  # wedged without the release
    asyncio.run(deliver(make_app(fake), "workflow_job", job("failure")))
    assert LOCK not in fake.world(REPO).refs
    assert len(dispatches(fake)) == 1
    assert any("ended `failure` without pushing" in b for b in fake.comments_on(REPO, PR))
    wake(fake)
    assert len(dispatches(fake)) == 2


def test_a_cancelled_job_releases_too_and_success_or_other_jobs_do_not():
    """cancelled releases; success, a job without the tag, or a moved head keep the lock."""
    fake = crashed_round()
    app = make_app(fake)
    asyncio.run(deliver(app, "workflow_job", job("success")))
    asyncio.run(deliver(app, "workflow_job", job("failure", name="Compete (agents)")))
    assert LOCK in fake.world(REPO).refs
    fake.push(REPO, PR, "c" * 40)  # the job pushed, then crashed: the new head is not ours
    asyncio.run(deliver(app, "workflow_job", job("failure")))
    assert LOCK in fake.world(REPO).refs
    fake.push(REPO, PR, SHA)
    asyncio.run(deliver(app, "workflow_job", job("cancelled")))
    assert LOCK not in fake.world(REPO).refs


def test_a_lock_older_than_the_bound_is_taken_over_by_the_next_event():
    """The workflow_job delivery was lost: past STALE since the dispatch, the next event
    dispatches again; before it, the event is coalesced."""
    fake = scene()
    fake.set_check(REPO, SHA, "ci", "completed", "failure")
    w = fake.world(REPO)
    w.refs[LOCK] = SHA
    dispatched = markers.marker("land", step="fix", sha=SHA, round=1)
    when = NOW - STALE + timedelta(minutes=5)
    user = User(login=APP_LOGIN, type="Bot")
    w.comments.setdefault(PR, []).append(
        Comment(id=900, body=f"Landing: red\n\n{dispatched}", user=user, created_at=when)
    )
    wake(fake)
    assert dispatches(fake) == []
    w.comments[PR][-1] = w.comments[PR][-1].model_copy(
        update={"created_at": NOW - STALE - timedelta(minutes=1)}
    )
    wake(fake)
    assert [d["command"] for d in dispatches(fake)] == ["land"]
    assert w.refs[LOCK] == SHA


def test_a_forged_job_name_on_another_run_releases_nothing():
    """Any workflow (a fork PR's) can name a job `[magi land #7]`: unless its run is magi's
    workflow dispatched to land PR 7, the lock stays and the PR is told nothing."""
    for forged in (
        {"event": "pull_request"},  # a fork's magi.yml, title and all
        {"event": "pull_request_target"},
        {"event": "push"},
        {"pr": 8},  # magi's landing run, for another PR
        {"path": ".github/workflows/ci.yml"},
        {"title": "magi compete, issue #1, run r1"},
        {"title": "not magi at all"},
    ):
        fake = crashed_round()
        said = len(fake.comments_on(REPO, PR))
        run = fake.world(REPO).runs[RUN_ID]
        update: dict[str, Any] = {k: v for k, v in forged.items() if k in ("event", "path")}
        if "pr" in forged:
            update["display_title"] = title(RunTitle("land", 1, pr=forged["pr"], run="r1"))
        if "title" in forged:
            update["display_title"] = forged["title"]
        fake.world(REPO).runs[RUN_ID] = run.model_copy(update=update)
        asyncio.run(deliver(make_app(fake), "workflow_job", job("failure")))
        assert LOCK in fake.world(REPO).refs, forged
        assert len(fake.comments_on(REPO, PR)) == said, forged


def test_a_job_whose_run_github_does_not_know_releases_nothing():
    fake = crashed_round()
    del fake.world(REPO).runs[RUN_ID]
    asyncio.run(deliver(make_app(fake), "workflow_job", job("failure")))
    assert LOCK in fake.world(REPO).refs
