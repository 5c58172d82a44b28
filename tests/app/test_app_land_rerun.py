"""A red check is re-run once before a fix round is spent: only an Actions job of this
repository, once per head; a failure that reproduces goes to the fixer as before."""

from __future__ import annotations

import asyncio

from app_landing_helpers import PR, SHA, dispatches, pull_event, scene, suite, wake
from github_helpers import REPO, SEAL, deliver, go, make_app, setup
from magi.app.rerun import RERUN, rerun_ref
from magi.github.port import GitHubError, GitHubPort
from magi.testing.github import FakeGitHub

RUN, JOB = 900, 901


def red(fake: FakeGitHub, sha: str = SHA) -> None:
    fake.set_actions_check(REPO, sha, "ci", "failure", RUN, JOB)


def test_a_flaky_check_is_re_run_and_green_spends_no_fix_round() -> None:
    fake = scene()
    red(fake)
    wake(fake)
    w = fake.world(REPO)
    assert w.reruns == [RUN]
    assert dispatches(fake) == []
    said = fake.comments_on(REPO, PR)[-1]
    assert "re-running the failed jobs once" in said
    assert "`ci`" in said
    assert SEAL.find([said], RERUN, sha=SHA, runs=str(RUN))
    fake.set_actions_check(REPO, SHA, "ci", "success", RUN, JOB)
    wake(fake)
    assert dispatches(fake) == []
    assert w.reruns == [RUN]


def test_a_failure_that_reproduces_goes_to_the_fixer() -> None:
    fake = scene()
    red(fake)
    wake(fake)
    assert fake.named("list_check_runs")
    wake(fake)  # the re-run is queued: nothing red, nothing to do
    assert dispatches(fake) == []
    red(fake)  # failed again on the same head
    wake(fake)
    assert [d["command"] for d in dispatches(fake)] == ["land"]
    assert fake.world(REPO).reruns == [RUN]


def test_a_new_head_gets_its_own_re_run() -> None:
    """Once per head: the fixer's push is new code, its flaky failure is re-run again."""
    fake = scene()
    red(fake)
    wake(fake)
    new = "e" * 40
    fake.push(REPO, PR, new)
    red(fake, new)
    wake(fake, new)
    assert fake.world(REPO).reruns == [RUN, RUN]
    assert rerun_ref(PR, new).removeprefix("refs/") in fake.world(REPO).refs


def test_a_check_magi_cannot_re_run_spends_a_round_as_before() -> None:
    """Another CI's check (not an Actions job here) goes straight to the fixer."""
    fake = scene()
    fake.set_check(REPO, SHA, "ci", "completed", "failure")
    wake(fake)
    assert fake.world(REPO).reruns == []
    assert [d["command"] for d in dispatches(fake)] == ["land"]


def test_an_actions_url_of_another_repository_is_not_re_run() -> None:
    fake = scene()
    red(fake)
    runs = fake.world(REPO).checks[SHA]
    url = f"https://github.com/someone/else/actions/runs/{RUN}/job/{JOB}"
    runs[-1] = runs[-1].model_copy(update={"details_url": url})
    wake(fake)
    assert fake.world(REPO).reruns == []
    assert [d["command"] for d in dispatches(fake)] == ["land"]


def test_two_events_at_once_re_run_once() -> None:
    fake = scene()
    red(fake)
    app = make_app(fake)

    async def both() -> None:
        await asyncio.gather(
            deliver(app, "check_suite", suite()), deliver(app, "check_suite", suite())
        )

    asyncio.run(both())
    assert fake.world(REPO).reruns == [RUN]
    assert sum("re-running" in b for b in fake.comments_on(REPO, PR)) == 1


def test_a_re_run_github_refuses_goes_to_the_fixer() -> None:
    fake = scene()
    red(fake)
    fake.fail("rerun_failed_jobs", GitHubError("Forbidden", status=403))
    wake(fake)
    assert [d["command"] for d in dispatches(fake)] == ["land"]


def test_the_adapter_re_runs_failed_jobs_over_http() -> None:
    fake, double, auth, _ = setup()
    fake.set_actions_check(REPO, SHA, "ci", "failure", RUN, JOB)
    go(auth, lambda port: _rerun(port))
    assert fake.world(REPO).reruns == [RUN]
    assert ("POST", f"/repos/{REPO.full_name}/actions/runs/{RUN}/rerun-failed-jobs") in (
        double.requests
    )
    runs = go(auth, lambda port: port.list_check_runs(REPO, SHA))
    assert runs[0].app is not None
    assert runs[0].app.slug == "github-actions"


async def _rerun(port: GitHubPort) -> None:
    await port.rerun_failed_jobs(REPO, RUN)


def test_the_re_run_claims_go_when_the_pr_folds() -> None:
    fake = scene()
    red(fake)
    wake(fake)
    w = fake.world(REPO)
    assert rerun_ref(PR, SHA).removeprefix("refs/") in w.refs
    w.pulls[PR] = w.pulls[PR].model_copy(update={"merged": True, "state": "closed"})
    asyncio.run(deliver(make_app(fake), "pull_request", pull_event(fake, "closed")))
    assert not [r for r in w.refs if r.startswith(f"magi/rerun/{PR}/")]
