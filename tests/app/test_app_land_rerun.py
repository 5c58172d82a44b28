"""A red check is re-run once before a fix round is spent: only an Actions job of this
repository, once per head; a failure that reproduces goes to the fixer as before."""

from __future__ import annotations

import asyncio

from app_landing_helpers import PR, SHA, dispatches, pull_event, scene, suite, wake
from github_helpers import REPO, SEAL, deliver, go, make_app, setup
from magi.app.rerun import RERUN, rerun_ref
from magi.github.models import JobStep, WorkflowJob
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


SHUTDOWN = (
    "##[group]Run pytest\n##[error]The runner has received a shutdown signal. This can happen "
    "when the runner service is stopped, or a manually started runner is canceled.\n"
    "##[error]The operation was canceled.\n"
)


def runner_lost(fake: FakeGitHub, job: int = JOB) -> None:
    """The jobs API's facts when the runner went away: a runner took the job, and its step
    was cancelled under it (none concluded failure)."""
    step = JobStep(name="Run pytest", status="completed", conclusion="cancelled")
    fake.set_job(REPO, RUN, WorkflowJob(id=job, name="ci", runner_name="r1", steps=[step]))


def machine_red(fake: FakeGitHub, sha: str = SHA) -> None:
    red(fake, sha)
    runner_lost(fake)
    fake.world(REPO).job_logs[JOB] = SHUTDOWN


def test_an_infrastructure_failure_is_re_run_bounded_and_never_spends_a_round() -> None:
    """The job log shows the runner shut down: re-run (said, with the runner's words) up to
    three times on the head; then said once more, and still no fix round."""
    fake = scene()
    w = fake.world(REPO)
    for n in (1, 2, 3):
        machine_red(fake)
        wake(fake)
        assert w.reruns == [RUN] * n
        said = fake.comments_on(REPO, PR)[-1]
        assert "the job log shows the machine failed, not the code" in said
        assert "the runner received a shutdown signal" in said
        assert f"({n} of 3)" in said
        assert SEAL.find([said], RERUN, sha=SHA, n=str(n))
    machine_red(fake)
    wake(fake)
    wake(fake)
    assert w.reruns == [RUN] * 3
    assert dispatches(fake) == []
    exhausted = [b for b in fake.comments_on(REPO, PR) if "for the machine's reasons again" in b]
    assert len(exhausted) == 1
    assert "spends no fix round" in exhausted[0]
    assert len(fake.named("job_log_tail")) == 5  # one a red event, no more


def test_a_code_failure_after_an_infrastructure_re_run_goes_to_the_fixer() -> None:
    """The re-run got a runner and failed in the tests: the code's, so the fixer's."""
    fake = scene()
    machine_red(fake)
    wake(fake)
    red(fake)
    fake.world(REPO).job_logs[JOB] = (
        "FAILED test_words\n##[error]Process completed with exit code 1.\n"
    )
    wake(fake)
    assert [d["command"] for d in dispatches(fake)] == ["land"]
    assert fake.world(REPO).reruns == [RUN]


def test_a_cancelled_job_is_re_run_without_reading_its_log() -> None:
    fake = scene()
    fake.set_actions_check(REPO, SHA, "ci", "cancelled", RUN, JOB)
    wake(fake)
    assert fake.world(REPO).reruns == [RUN]
    assert fake.named("job_log_tail") == []
    assert "the job ended cancelled" in fake.comments_on(REPO, PR)[-1]


def test_a_red_job_that_is_not_the_machines_keeps_the_single_re_run() -> None:
    """Two red jobs, one the machine's and one the code's: not an infrastructure failure."""
    fake = scene()
    machine_red(fake)
    fake.set_actions_check(REPO, SHA, "lint", "failure", RUN, JOB + 1)
    fake.world(REPO).job_logs[JOB + 1] = (
        "E501 line too long\n##[error]Process completed with exit code 1.\n"
    )
    wake(fake)
    said = fake.comments_on(REPO, PR)[-1]
    assert "re-running the failed jobs once before spending a fix round" in said
    red(fake)
    fake.set_actions_check(REPO, SHA, "lint", "failure", RUN, JOB + 1)
    wake(fake)
    assert [d["command"] for d in dispatches(fake)] == ["land"]


def test_the_job_log_is_read_through_githubs_redirect_over_http() -> None:
    """Over the HTTP double (the 302 to a signed URL kept): the shutdown is read and told."""
    from magi.app.rerun import machine_failures

    fake, double, auth, _ = setup()
    red(fake)
    fake.world(REPO).job_logs[JOB] = SHUTDOWN

    async def read(port: GitHubPort) -> dict[str, str]:
        return await machine_failures(port, REPO, ["ci"], await port.list_check_runs(REPO, SHA))

    runner_lost(fake)
    found = go(auth, read)
    assert found == {"ci": "the runner received a shutdown signal"}
    double.assert_clean()


def test_a_tests_own_words_are_not_the_machines() -> None:
    """The code under test prints the runner's words (plain, or as ``::error::``, which the
    log shows as ``##[error]``) and fails its step: the code's, re-run once, then the fixer;
    nothing of the log is posted."""
    fake = scene()
    for log in (
        "System.Threading.Tasks.TaskCanceledException: The operation was canceled.\n",
        "##[error]The runner has received a shutdown signal. <img src=x>\n",
        "##[error]No space left on device\n",
    ):
        red(fake)
        fake.world(REPO).job_logs[JOB] = log
        wake(fake)
    said = fake.comments_on(REPO, PR)
    assert not any("machine failed" in b for b in said)
    assert not any("<img" in b for b in said)
    assert fake.world(REPO).reruns == [RUN]
    assert [d["command"] for d in dispatches(fake)] == ["land"]


def test_the_runners_error_counts_only_when_no_step_failed() -> None:
    """With the steps not failed, the same ``##[error]`` line is the runner's; a log with
    the words only in a test's output is still the code's."""
    from magi.app.rerun import machine_failures

    fake = scene()
    red(fake)
    runner_lost(fake)
    log = fake.world(REPO).job_logs
    checks = fake.world(REPO).checks[SHA]
    log[JOB] = "Error: The operation was canceled.\n"
    assert asyncio.run(machine_failures(fake, REPO, ["ci"], checks)) == {}
    log[JOB] = "2026-12-01T09:04:00.2Z ##[error]The operation was canceled.\n"
    found = asyncio.run(machine_failures(fake, REPO, ["ci"], checks))
    assert found == {"ci": "the runner canceled the job"}


def test_a_job_no_runner_took_is_the_machines_without_its_log() -> None:
    fake = scene()
    red(fake)
    fake.set_job(REPO, RUN, WorkflowJob(id=JOB, name="ci", conclusion="failure"))
    wake(fake)
    assert fake.world(REPO).reruns == [RUN]
    assert fake.named("job_log_tail") == []
    assert "no runner took the job" in fake.comments_on(REPO, PR)[-1]
