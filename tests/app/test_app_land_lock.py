"""A landing job that crashed gives back refs/magi/land/<pr>/<head>: landing never wedges."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from app_landing_helpers import PR, SHA, dispatches, scene, suite, wake
from github_helpers import NOW, REPO, SEAL, deliver, fixture, make_app
from magi.app.context import AppContext
from magi.app.land_lock import STALE, claim
from magi.core.threads.progress import RunTitle, title
from magi.github.models import Comment, GitCommit, User
from magi.testing.github import APP_LOGIN

LOCK = f"magi/land/{PR}/{SHA}"


def job(conclusion: str, name: str = f"Fix round (agents, no credential) [magi land #{PR}]"):
    p: dict[str, Any] = fixture("workflow_job.completed")
    p["repository"].update(full_name=REPO.full_name, default_branch="main")
    # A job of magi's workflow (its `name:`): another workflow's job costs no call at all.
    p["workflow_job"].update(conclusion=conclusion, name=name, workflow_name="magi")
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
    fake.run_ids = [RUN_ID]  # the dispatch starts the run the job events below are of
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


def held_lock(age: timedelta) -> Any:
    """A red head whose lock a dispatch ``age`` ago took, the job's end never delivered.

    The lock's value is the head itself, as an older magi took it: dated by its dispatch
    comment (a lock of this magi's is a commit of its own, dated by GitHub)."""
    fake = scene()
    fake.set_check(REPO, SHA, "ci", "completed", "failure")
    w = fake.world(REPO)
    w.refs[LOCK] = SHA
    dispatched = SEAL.marker("land", step="fix", sha=SHA, round=1)
    user = User(login=APP_LOGIN, type="Bot")
    w.comments.setdefault(PR, []).append(
        Comment(id=900, body=f"Landing: red\n\n{dispatched}", user=user, created_at=NOW - age)
    )
    return fake


def test_a_lock_older_than_the_bound_is_taken_over_by_the_next_event():
    """The workflow_job delivery was lost: past STALE since the dispatch, the next event
    dispatches again; before it, the event is coalesced."""
    fake = held_lock(STALE - timedelta(minutes=5))
    w = fake.world(REPO)
    wake(fake)
    assert dispatches(fake) == []
    w.comments[PR][-1] = w.comments[PR][-1].model_copy(
        update={"created_at": NOW - STALE - timedelta(minutes=1)}
    )
    wake(fake)
    assert [d["command"] for d in dispatches(fake)] == ["land"]
    taken = w.objects[w.refs[LOCK]]
    assert isinstance(taken, GitCommit)
    assert taken.parents == [SHA]  # moved, not deleted


def test_of_two_takers_of_a_stale_lock_exactly_one_wins():
    """B judges the lock stale; before B acts, A takes it over whole. B must lose: GitHub's
    fast-forward check refuses B's move from the value B read (a delete then a create would
    have deleted A's lock and taken it a second time)."""
    fake = held_lock(STALE + timedelta(minutes=1))
    ctx = AppContext(ports=lambda i, r: fake, app_login=APP_LOGIN, seal=SEAL, clock=lambda: NOW)
    pull = fake.world(REPO).pulls[PR]
    results: list[bool] = []
    pending: list[Any] = [claim(ctx, fake, REPO, pull)]  # A, run inside B's stale judgement
    real = fake.list_comments

    async def list_comments(repo: Any, number: int) -> Any:
        if pending:
            results.append(await pending.pop())
        return await real(repo, number)

    fake.list_comments = list_comments  # type: ignore[method-assign]
    results.append(asyncio.run(claim(ctx, fake, REPO, pull)))
    assert [bool(r) for r in results] == [True, False]


def test_a_taken_over_lock_is_dated_by_its_takeover_and_taken_over_again_later():
    """A takeover whose dispatch never said so (the App died between the two): the old
    dispatch comment says "stale", but the lock's own date, the takeover's, says "just
    taken"; STALE after the takeover it is taken over again, from the takeover's value."""
    fake = held_lock(STALE + timedelta(minutes=1))
    fake.now = NOW
    wake(fake)
    w = fake.world(REPO)
    first = w.refs[LOCK]
    assert len(dispatches(fake)) == 1
    w.comments[PR] = [c for c in w.comments[PR] if c.id == 900]  # only the old dispatch said
    wake(fake)
    assert len(dispatches(fake)) == 1
    later = make_app(fake, clock=lambda: NOW + STALE + timedelta(minutes=1))
    asyncio.run(deliver(later, "check_suite", suite()))
    assert len(dispatches(fake)) == 2
    again = w.objects[w.refs[LOCK]]
    assert isinstance(again, GitCommit)
    assert again.parents == [first]


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


def stale_claim(fake: Any) -> str:
    """A lock of this magi's, taken STALE and a minute ago, its job's end never delivered."""
    ctx = AppContext(ports=lambda i, r: fake, app_login=APP_LOGIN, seal=SEAL, clock=lambda: NOW)
    fake.now = NOW - STALE - timedelta(minutes=1)
    lock = asyncio.run(claim(ctx, fake, REPO, fake.world(REPO).pulls[PR]))
    fake.now = NOW
    assert lock is not None
    return lock


def test_a_lock_is_a_commit_of_its_own_dated_by_github_and_taken_over_when_stale():
    fake = scene()
    fake.set_check(REPO, SHA, "ci", "completed", "failure")
    w = fake.world(REPO)
    old = stale_claim(fake)
    made = w.objects[old]
    assert isinstance(made, GitCommit)
    assert made.parents == [SHA]
    assert made.committed_at == NOW - STALE - timedelta(minutes=1)
    wake(fake)
    assert [d["command"] for d in dispatches(fake)] == ["land"]
    taken = w.objects[w.refs[LOCK]]
    assert isinstance(taken, GitCommit)
    assert taken.parents == [old]
    (said,) = SEAL.find(fake.comments_on(REPO, PR), "land")
    assert said["lock"] == w.refs[LOCK]


def test_a_stale_taker_loses_to_a_release_and_a_new_claim_in_between():
    """B judges lock L1 stale; meanwhile L1 is released and A claims afresh (L2). B's move
    from L1 is no fast forward from L2: B loses. Were every fresh lock the head sha, L2
    would equal L1 and both would hold it."""
    fake = scene()
    w = fake.world(REPO)
    old = stale_claim(fake)
    ctx = AppContext(ports=lambda i, r: fake, app_login=APP_LOGIN, seal=SEAL, clock=lambda: NOW)
    pull = w.pulls[PR]
    results: list[str | None] = []
    real = fake.get_git_commit

    async def get_git_commit(repo: Any, sha: str) -> Any:
        if sha == old and not results:  # B dating L1: the release and A's claim happen now
            del w.refs[LOCK]
            results.append(await claim(ctx, fake, REPO, pull))
        return await real(repo, sha)

    fake.get_git_commit = get_git_commit  # type: ignore[method-assign]
    results.append(asyncio.run(claim(ctx, fake, REPO, pull)))
    fresh, stale_taker = results
    assert fresh is not None
    assert stale_taker is None
    assert w.refs[LOCK] == fresh


def test_a_dispatch_github_refuses_gives_its_lock_back():
    """No run will ever end to release it: the lock goes at once, and the next event tries
    again (here, once the workflow is on the default branch)."""
    fake = scene()
    fake.set_check(REPO, SHA, "ci", "completed", "failure")
    w = fake.world(REPO)
    w.workflows.clear()
    wake(fake)
    assert LOCK not in w.refs
    assert dispatches(fake) == []
    w.workflows.add("magi.yml")
    wake(fake)
    assert [d["command"] for d in dispatches(fake)] == ["land"]


def test_a_superseded_jobs_late_end_does_not_release_its_successors_lock():
    """The job taken over from ends (failure) after the takeover dispatched another: the
    lock is the successor's, and stays."""
    fake = crashed_round()
    w = fake.world(REPO)
    first = w.refs[LOCK]
    w.objects[first] = w.objects[first].model_copy(  # type: ignore[union-attr]
        update={"committed_at": NOW - STALE - timedelta(minutes=1)}
    )
    fake.run_ids = [RUN_ID + 1]
    fake.now = NOW
    wake(fake)
    assert len(dispatches(fake)) == 2
    successor = w.refs[LOCK]
    assert successor != first
    asyncio.run(deliver(make_app(fake), "workflow_job", job("failure")))  # RUN_ID, the first
    assert w.refs[LOCK] == successor


def test_a_rebase_that_handed_its_conflict_to_the_fixer_is_planned_at_once():
    """The rebase job stopped at a conflict and handed it on (its sealed marker) and failed:
    its lock goes and the fixer's round is dispatched now, once, marked as the conflict's;
    a second hand-off on that head dispatches nothing more (the rebase then asks a person)."""
    fake = scene()
    fake.add_run(REPO, RUN_ID, title(RunTitle("rebase", 1, pr=PR, run="r1")))
    fake.run_ids = [RUN_ID]
    w = fake.world(REPO)
    w.pulls[PR] = w.pulls[PR].model_copy(update={"mergeable_state": "behind"})
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    wake(fake)
    assert [d["command"] for d in dispatches(fake)] == ["rebase"]
    handed = SEAL.marker("land", step="conflict", sha=SHA, base="b" * 40, to="fixer")
    asyncio.run(fake.create_comment(REPO, PR, f"the changes conflict\n\n{handed}"))
    name = f"Rebase onto the base (App token, no agents) [magi land #{PR}]"
    app = make_app(fake)
    asyncio.run(deliver(app, "workflow_job", job("failure", name=name)))
    assert [d["command"] for d in dispatches(fake)] == ["rebase", "land"]
    assert SEAL.find(fake.comments_on(REPO, PR), "land", step="fix", sha=SHA, conflict="1")
    wake(fake)
    assert len(dispatches(fake)) == 2  # the round's lock holds this head
