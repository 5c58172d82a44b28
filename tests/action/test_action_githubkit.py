"""Publishing's and progress's port calls over githubkit, against the HTTP double."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TypeVar

import httpx
import pytest
from githubkit import GitHub, TokenAuthStrategy

from github_helpers import no_sleep
from magi.github.githubkit_port import GitHubKitPort, token_port
from magi.github.models import Repo, WorkflowJob
from magi.github.port import GitHubError
from magi.testing import github_graphql
from magi.testing.github import FakeGitHub
from magi.testing.github_http import GitHubHTTP

API = "https://api.github.test"
REPO = Repo(owner="octo", name="widgets")
T = TypeVar("T")


def _port(double: GitHubHTTP, api: str = API) -> GitHubKitPort:
    gh = GitHub(
        TokenAuthStrategy("ghs_test"),
        base_url=api + "/",
        async_transport=httpx.MockTransport(double),
        auto_retry=False,
        http_cache=False,
    )
    return GitHubKitPort(gh, sleep=no_sleep)  # the retry layer's waits are not real


def _go(double: GitHubHTTP, use: Callable[[GitHubKitPort], Awaitable[T]], api: str = API) -> T:
    return asyncio.run(use(_port(double, api)))


def test_the_token_port_is_the_app_port_with_githubs_retry_off():
    """The publish job's port is the App's adapter, one retry layer (githubkit's off)."""
    port = token_port(API, "ghs_test")
    assert isinstance(port, GitHubKitPort)
    assert port.gh.config.auto_retry is None or port.gh.config.auto_retry is False


def test_follow_ups_are_filed_and_found_by_label_over_http():
    """POST and GET /repos/{o}/{r}/issues: labels sent and filtered as GitHub takes them."""
    fake = FakeGitHub()
    fake.add_issue(REPO, 1, "the task")
    double = GitHubHTTP(fake)

    async def go(port: GitHubKitPort) -> tuple[int, list[int], list[str]]:
        made = await port.create_issue(REPO, title="t", body="b", labels=["magi:follow-up"])
        found = await port.list_issues(REPO, labels=["magi:follow-up"])
        return made.number, [i.number for i in found], [lb.name for lb in found[0].labels]

    made, found, labels = _go(double, go)
    assert (made, found, labels) == (2, [2], ["magi:follow-up"])
    assert fake.labels_on(REPO, 2) == ["magi:follow-up"]
    assert ("GET", "/repos/octo/widgets/issues") in double.requests
    double.assert_clean()


def test_a_draft_is_turned_ready_and_back_through_graphql():
    """REST cannot change a draft: the port sends the GraphQL mutations by the PR's node id."""
    fake = FakeGitHub()
    fake.add_pull(REPO, 5, "magi/r/A", "a" * 40, draft=True)
    double = GitHubHTTP(fake)

    async def go(port: GitHubKitPort) -> tuple[bool, bool]:
        ready = await port.set_draft(REPO, 5, False)
        again = await port.set_draft(REPO, 5, True)
        return ready.draft, again.draft

    assert _go(double, go) == (False, True)
    assert [c.args["draft"] for c in fake.named("set_draft")] == [False, True]
    assert fake.world(REPO).pulls[5].draft is True
    assert double.requests.count(("POST", "/graphql")) == 2
    double.assert_clean()


def test_ghes_sends_graphql_to_api_graphql():
    """On GitHub Enterprise Server (base /api/v3) GraphQL lives at /api/graphql."""
    fake = FakeGitHub()
    fake.add_pull(REPO, 5, "magi/r/A", "a" * 40, draft=True)
    double = GitHubHTTP(fake)
    pull = _go(double, lambda p: p.set_draft(REPO, 5, False), api="https://ghe.test/api/v3")
    assert pull.draft is False
    assert ("POST", "/api/graphql") in double.requests


def test_an_unknown_node_is_githubs_not_found_as_a_github_error(monkeypatch):
    """GraphQL answers 200 with errors: the port turns NOT_FOUND into a 404 GitHubError."""
    fake = FakeGitHub()
    fake.add_pull(REPO, 5, "magi/r/A", "a" * 40, draft=True)
    double = GitHubHTTP(fake)
    monkeypatch.setattr(github_graphql, "pull_of", lambda node: None)  # an id it never gave
    with pytest.raises(GitHubError, match="Could not resolve") as caught:
        _go(double, lambda p: p.set_draft(REPO, 5, False))
    assert caught.value.status == 404
    assert fake.world(REPO).pulls[5].draft is True


def test_node_ids_round_trip_and_strangers_are_refused():
    """The double's node ids name one PR; anything else resolves to nothing."""
    from magi.testing.github_routes import node_id

    assert github_graphql.pull_of(node_id(REPO, 12)) == (REPO, 12)
    assert github_graphql.pull_of("PR_kwDOA") is None
    assert github_graphql.pull_of("MDExOlB1bGxSZXF1ZXN0MQ==") is None


def test_the_graphql_double_serves_nothing_but_the_two_mutations():
    """Any other GraphQL query fails the test, as a stray REST route does."""
    double = GitHubHTTP(FakeGitHub())

    async def go(port: GitHubKitPort) -> None:
        await port._call(port.gh.graphql._arequest, "query { viewer { login } }")

    with pytest.raises(GitHubError):
        _go(double, go)
    with pytest.raises(AssertionError, match="outside the double"):
        double.assert_clean()


def test_a_workflow_run_and_its_jobs_come_back_parsed():
    """GET .../actions/runs/{id} carries the run-name; .../jobs the jobs with their links."""
    fake = FakeGitHub()
    fake.add_run(REPO, 77, "magi compete #3 r-1", status="in_progress")
    started = datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
    fake.set_job(
        REPO,
        77,
        WorkflowJob(
            id=1,
            name="Read the issue",
            status="completed",
            conclusion="success",
            started_at=started,
            html_url="https://github.example/job/1",
        ),
    )
    fake.set_job(REPO, 77, WorkflowJob(id=2, name="Compete", status="in_progress"))
    double = GitHubHTTP(fake)

    async def go(port: GitHubKitPort) -> tuple[str, str, list[tuple[str, str | None]], object]:
        run = await port.get_workflow_run(REPO, 77)
        jobs = await port.list_run_jobs(REPO, 77)
        return run.display_title, run.path, [(j.name, j.conclusion) for j in jobs], jobs[0]

    title, path, jobs, first = _go(double, go)
    assert title == "magi compete #3 r-1"
    assert path == ".github/workflows/magi.yml"
    assert jobs == [("Read the issue", "success"), ("Compete", None)]
    assert isinstance(first, WorkflowJob)
    assert first.started_at == started
    assert first.html_url == "https://github.example/job/1"
    double.assert_clean()


def test_workflow_runs_are_read_past_the_first_page():
    """A live run listed after 150 finished ones is still found: the list is paged."""
    fake = FakeGitHub()
    for n in range(150):
        fake.add_run(REPO, 1000 + n, f"magi compete #{n} r-{n}", status="completed")
    fake.add_run(REPO, 5, "magi compete #3 r-live", status="in_progress")
    double = GitHubHTTP(fake)
    runs = _go(double, lambda p: p.list_workflow_runs(REPO, "magi.yml"))
    assert len(runs) == 151
    assert [r.display_title for r in runs if r.status == "in_progress"] == [
        "magi compete #3 r-live"
    ]
    pages = [q for q in double.requests if q[1].endswith("/actions/workflows/magi.yml/runs")]
    assert len(pages) == 2
    double.assert_clean()


def test_pull_requests_and_check_runs_are_read_past_the_first_page():
    """GitHub gives at most 100 a page: the 101st PR and check run are read all the same."""
    fake = FakeGitHub()
    for n in range(1, 102):
        fake.add_pull(REPO, n, f"b{n}", f"{n:040x}")
        fake.set_check(REPO, "a" * 40, f"check-{n}", "completed", "success")
    double = GitHubHTTP(fake)

    async def go(port: GitHubKitPort) -> tuple[int, int]:
        pulls = await port.list_pulls(REPO, state="all")
        checks = await port.list_check_runs(REPO, "a" * 40)
        return len(pulls), len(checks)

    assert _go(double, go) == (101, 101)
    double.assert_clean()


def test_cancelling_a_finished_run_is_githubs_409_read_as_nothing_cancelled():
    """POST .../cancel on a completed run answers 409: the port says False, not an error."""
    fake = FakeGitHub()
    fake.add_run(REPO, 8, "magi compete #3 r-1", status="completed", conclusion="success")
    fake.add_run(REPO, 9, "magi compete #4 r-2", status="in_progress")
    double = GitHubHTTP(fake)

    async def go(port: GitHubKitPort) -> tuple[bool, bool]:
        return await port.cancel_workflow_run(REPO, 8), await port.cancel_workflow_run(REPO, 9)

    assert _go(double, go) == (False, True)
    assert fake.world(REPO).runs[8].conclusion == "success"
    assert fake.world(REPO).runs[9].conclusion == "cancelled"
    double.assert_clean()
