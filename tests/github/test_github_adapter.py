"""The githubkit adapter over the HTTP double: real shapes, App auth, one bounded retry layer."""

from __future__ import annotations

import asyncio
import json
import re
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from github_helpers import API, REPO, SEAL, go, pem, setup
from magi.core.threads import markers
from magi.github.auth import AppAuth
from magi.github.githubkit_port import GitHubKitPort
from magi.github.models import Activity
from magi.github.port import CALLS, GitHubError, GitHubPort
from magi.testing.github import FakeGitHub
from magi.testing.github_http import OPERATIONS, GitHubHTTP, extract_examples, load_examples
from magi.testing.github_routes import ROUTES


def test_every_route_the_double_serves_is_in_githubs_api() -> None:
    """The double refuses to be built with a route GitHub does not have."""
    GitHubHTTP(FakeGitHub())  # raises on an unknown route
    known = OPERATIONS.read_text().splitlines()
    assert len(known) > 1000
    assert all(m in {"GET", "POST", "PATCH", "PUT", "DELETE"} for m, _, _ in ROUTES)


def test_shipped_examples_match_the_published_description() -> None:
    """examples.json is GitHub's own examples, unchanged (checked when the source is here)."""
    source = Path("/work/shared/github/openapi/api.github.com.subset.json")
    if not source.is_file():
        pytest.skip("the OpenAPI subset is not on this machine")
    published = extract_examples(source)
    # Taken from the whole description the subset was cut from (SOURCE.md says which).
    beyond_the_subset = {("GET", "/repos/{owner}/{repo}/activity")}
    for key, value in load_examples().items():
        if key in beyond_the_subset:
            assert key not in published, f"{key} is in the subset now: compare it"
            continue
        assert published[key] == value


def test_a_request_outside_the_double_fails_the_test() -> None:
    """Any route the double does not serve is an error, and recorded."""
    _fake, double, auth, _ = setup()

    async def stray(port: GitHubPort) -> None:
        assert isinstance(port, GitHubKitPort)
        await port._call(port.gh.rest.repos.async_list_tags, "o", "r")

    with pytest.raises(GitHubError):  # githubkit wraps the double's AssertionError
        go(auth, stray)
    assert set(double.unanswered) == {"GET /repos/o/r/tags"}
    with pytest.raises(AssertionError, match="outside the double"):
        double.assert_clean()


def test_a_fork_prs_run_arrives_with_its_event_head_repository_and_title() -> None:
    """Through the HTTP double and githubkit: a fork PR's run of magi.yml reads as GitHub
    sends it (event `pull_request`, the fork as head repository), and is not magi's."""
    from magi.app.progress import is_magi_run

    fake, double, auth, _ = setup()
    fake.add_fork_run(REPO, 77, "magi compete, issue #1", fork="stranger/Hello-World")

    async def use(port: GitHubPort) -> list[Any]:
        await port.dispatch_workflow(REPO, "magi.yml", "main", {"issue": "1"})
        return [
            *await port.list_workflow_runs(REPO, "magi.yml"),
            await port.get_workflow_run(REPO, 77),
        ]

    *listed, one = go(auth, use)
    fork = next(r for r in listed if r.id == 77)
    for r in (fork, one):
        assert (r.event, r.display_title) == ("pull_request", "magi compete, issue #1")
        assert r.head_repository is not None
        assert r.head_repository.full_name == "stranger/Hello-World"
        assert not is_magi_run(r, "magi.yml", REPO)
    (ours,) = [r for r in listed if r.id != 77]
    assert is_magi_run(ours, "magi.yml", REPO)
    double.assert_clean()


def test_comments_round_trip_through_real_shapes() -> None:
    """Create, list (paged), update and react: parsed from GitHub-shaped bodies."""
    fake, double, auth, _ = setup()

    async def use(port: GitHubPort) -> list[str]:
        for i in range(105):
            await port.create_comment(REPO, 1, f"c{i}")
        first = (await port.list_comments(REPO, 1))[0]
        await port.update_comment(REPO, first.id, "edited")
        await port.react_to_comment(REPO, first.id, "+1")
        await port.react_to_issue(REPO, 1, "rocket")
        return [c.body for c in await port.list_comments(REPO, 1)]

    bodies = go(auth, use)
    assert len(bodies) == 105
    assert bodies[0] == "edited"
    assert fake.world(REPO).reactions == [
        ("comment", fake.world(REPO).comments[1][0].id, "+1"),
        ("issue", 1, "rocket"),
    ]
    double.assert_clean()


def test_claims_refs_content_and_dispatch() -> None:
    """A ref is created once; content decodes; 404s are None; dispatch returns the run id."""
    fake, double, auth, _ = setup()
    fake.world(REPO).files[("main", ".magi/config.toml")] = "[github]\nlabel = 'x'\n"

    async def use(port: GitHubPort) -> dict[str, Any]:
        head = await port.get_ref(REPO, "heads/main")
        assert head is not None
        first = await port.create_ref(REPO, "refs/magi/claims/issue-1", head.sha)
        second = await port.create_ref(REPO, "refs/magi/claims/issue-1", head.sha)
        content = await port.get_content(REPO, ".magi/config.toml", "main")
        absent = await port.get_content(REPO, "nope.toml", "main")
        matching = await port.matching_refs(REPO, "magi/claims/")
        gone = await port.delete_ref(REPO, "magi/claims/issue-1")
        again = await port.delete_ref(REPO, "magi/claims/issue-1")
        d = await port.dispatch_workflow(REPO, "magi.yml", "main", {"issue": "1"})
        runs = await port.list_workflow_runs(REPO, "magi.yml")
        return {
            "first": first,
            "second": second,
            "text": content.text if content else None,
            "absent": absent,
            "matching": [r.ref for r in matching],
            "gone": gone,
            "again": again,
            "run": d.workflow_run_id,
            "runs": [r.id for r in runs],
        }

    got = go(auth, use)
    assert (got["first"], got["second"]) == (True, False)
    assert got["text"] == "[github]\nlabel = 'x'\n"
    assert got["absent"] is None
    assert got["matching"] == ["refs/magi/claims/issue-1"]
    assert (got["gone"], got["again"]) == (True, False)
    assert got["runs"] == [got["run"]]
    double.assert_clean()


def test_the_gate_reads_and_merges_with_the_sha() -> None:
    """PR, checks, status, commit and merge through HTTP, the SHA sent as the precondition."""
    fake, double, auth, _ = setup()
    fake.add_pull(REPO, 7, "magi/r/A", "a" * 40, body=SEAL.marker(markers.PR, issue=1))
    fake.set_check(REPO, "a" * 40, "ci", "completed", "success")
    fake.world(REPO).permissions["alice"] = "maintain"

    async def use(port: GitHubPort) -> dict[str, Any]:
        pull = await port.get_pull(REPO, 7)
        checks = await port.list_check_runs(REPO, pull.head.sha)
        status = await port.combined_status(REPO, pull.head.sha)
        commit = await port.get_commit(REPO, pull.head.sha)
        perm = await port.permission(REPO, "alice")
        merged = await port.merge_pull(REPO, 7, sha=pull.head.sha, method="squash", title="t")
        closed = await port.close_issue(REPO, 1)
        return {
            "ref": pull.head.ref,
            "checks": [(c.name, c.conclusion) for c in checks],
            "status": status.total_count,
            "when": commit.committed_at,
            "perm": perm.permission,
            "merged": merged.merged,
            "closed": closed.state,
        }

    got = go(auth, use)
    assert got["ref"] == "magi/r/A"
    assert got["checks"] == [("ci", "success")]
    assert got["status"] == 0
    assert got["when"] is not None
    assert got["merged"] is True
    assert got["closed"] == "closed"
    assert fake.world(REPO).merges[0]["sha"] == "a" * 40
    merge = [c for c in fake.calls if c.name == "merge_pull"]
    assert merge[0].args["method"] == "squash"
    double.assert_clean()


def test_a_branchs_pushes_come_back_with_githubs_own_times() -> None:
    """The activity log over HTTP: one branch, newest first, GitHub's clock on each push."""
    fake, double, auth, _ = setup()
    fake.add_pull(REPO, 7, "magi/r/A", "a" * 40)
    fake.now = fake.now + timedelta(minutes=5)
    fake.push(REPO, 7, "c" * 40, committed_at=fake.now - timedelta(days=3))
    fake.world(REPO).refs["heads/other"] = "d" * 40

    async def use(port: GitHubPort) -> list[Activity]:
        return await port.list_activities(REPO, "refs/heads/magi/r/A")

    log = go(auth, use)
    assert [(a.after, a.activity_type, a.timestamp) for a in log] == [
        ("c" * 40, "push", fake.now),
        ("a" * 40, "branch_creation", fake.now - timedelta(minutes=5)),
    ]
    assert double.requests[-1] == ("GET", "/repos/Codertocat/Hello-World/activity")
    assert [c.args for c in fake.named("list_activities")] == [{"ref": "refs/heads/magi/r/A"}]
    double.assert_clean()


def test_a_branchs_history_comes_back_newest_first_with_messages_and_parents() -> None:
    """List commits over HTTP (``/magi stats``' afterlife): GitHub's shape, every page."""
    fake, double, auth, _ = setup()
    first = fake.commit_files(REPO, {"a": "1"}, message="start")
    second = fake.commit_files(REPO, {"a": "2"}, parent=first, message='Revert "start"')
    fake.world(REPO).refs["heads/main"] = second

    async def use(port: GitHubPort) -> list[tuple[str, str, list[str]]]:
        return [(c.sha, c.message, c.parents) for c in await port.list_commits(REPO, "main")]

    assert go(auth, use) == [(second, 'Revert "start"', [first]), (first, "start", [])]
    assert double.requests[-1] == ("GET", "/repos/Codertocat/Hello-World/commits")
    double.assert_clean()


def test_the_fakes_log_has_every_branch_change_however_it_was_made() -> None:
    """A fast-forward is a push, a forced non-fast-forward a force_push, a new branch a
    creation and a removed one a deletion; a ref outside refs/heads is not in the log."""
    fake = FakeGitHub()
    old = fake.commit_files(REPO, {"a": "1"})
    new = fake.commit_files(REPO, {"a": "2"}, parent=old)
    other = fake.commit_files(REPO, {"a": "3"}, parent=old)
    refs = fake.world(REPO).refs
    refs.setdefault("heads/x", old)
    asyncio.run(fake.update_ref(REPO, "heads/x", new, force=False))
    asyncio.run(fake.update_ref(REPO, "heads/x", other, force=True))
    refs.update({"magi/claims/issue-1": old})
    refs.pop("heads/x")
    log = asyncio.run(fake.list_activities(REPO, "x"))
    assert [(a.activity_type, a.before, a.after) for a in reversed(log)] == [
        ("branch_creation", "0" * 40, old),
        ("push", old, new),
        ("force_push", new, other),
        ("branch_deletion", other, "0" * 40),
    ]
    assert {a.ref for a in refs.activity} == {"refs/heads/x"}


def test_the_published_activity_example_parses_though_its_field_names_are_older() -> None:
    """GitHub's example says pushed_at/push_type where the schema says timestamp/activity_type."""
    (item,) = load_examples()[("GET", "/repos/{owner}/{repo}/activity")]
    a = Activity.from_api(item)
    assert (a.activity_type, a.timestamp.year, a.after) == ("push", 2011, item["after"])


def test_an_activity_answer_of_the_wrong_shape_is_a_github_error() -> None:
    _, double, auth, _ = setup()
    double.inject("GET", r"/activity$", 200, body=[{"ref": "refs/heads/x"}])

    async def use(port: GitHubPort) -> list[Activity]:
        return await port.list_activities(REPO, "refs/heads/x")

    with pytest.raises(GitHubError, match="unexpected activity shape"):
        go(auth, use)


def test_a_merge_refused_by_github_is_a_github_error_with_its_status() -> None:
    """409 (head moved) arrives as GitHubError(status=409), not retried."""
    fake, _double, auth, sleeps = setup()
    fake.add_pull(REPO, 7, "magi/r/A", "a" * 40)

    async def use(port: GitHubPort) -> None:
        await port.merge_pull(REPO, 7, sha="b" * 40, method="squash", title=None)

    with pytest.raises(GitHubError) as info:
        go(auth, use)
    assert info.value.status == 409
    assert sleeps.waits == []


def test_server_errors_are_retried_with_backoff_and_nothing_is_lost() -> None:
    """Two 502s then success: one comment, waits 1 s and 2 s, no real sleeping."""
    fake, double, auth, sleeps = setup()
    double.inject("POST", r"/issues/1/comments$", 502, times=2)

    comment = go(auth, lambda port: port.create_comment(REPO, 1, "hello"))
    assert comment.body == "hello"
    assert fake.comments_on(REPO, 1) == ["hello"]
    assert sleeps.waits == [1.0, 2.0]


def test_secondary_rate_limit_honours_retry_after() -> None:
    """403 with Retry-After: wait exactly what GitHub said, then succeed."""
    fake, double, auth, sleeps = setup()
    body = {"message": "You have exceeded a secondary rate limit."}
    double.inject("POST", r"/issues/1/comments$", 403, headers={"retry-after": "7"}, body=body)
    go(auth, lambda port: port.create_comment(REPO, 1, "hello"))
    assert sleeps.waits == [7.0]
    assert fake.comments_on(REPO, 1) == ["hello"]


def test_secondary_rate_limit_without_header_waits_a_minute() -> None:
    """A 403 naming the secondary limit but no header waits 60 s (GitHub's advice)."""
    _fake, double, auth, sleeps = setup()
    body = {"message": "You have exceeded a secondary rate limit. Please wait."}
    double.inject("POST", r"/issues/1/comments$", 403, body=body)
    go(auth, lambda port: port.create_comment(REPO, 1, "x"))
    assert sleeps.waits == [60.0]


def test_timeouts_are_retried() -> None:
    """A timed-out request is tried again."""
    _fake, double, auth, sleeps = setup()
    double.timeout("GET", r"/issues/1$", times=2)
    issue = go(auth, lambda port: port.get_issue(REPO, 1))
    assert issue.number == 1
    assert len(sleeps.waits) == 2


def test_retries_are_bounded() -> None:
    """A server that keeps failing: five tries, then a transient GitHubError."""
    _fake, double, auth, sleeps = setup()
    double.inject("GET", r"/issues/1$", 503, times=50)
    with pytest.raises(GitHubError) as info:
        go(auth, lambda port: port.get_issue(REPO, 1))
    assert info.value.status == 503
    assert info.value.transient
    tries = [r for r in double.requests if re.search(r"/issues/1$", r[1])]
    assert len(tries) == 5
    assert len(sleeps.waits) == 4


def test_a_wait_longer_than_the_cap_is_not_slept() -> None:
    """A primary limit resetting in an hour fails at once rather than holding a worker."""
    _fake, double, auth, sleeps = setup()
    reset = str(int(time.time()) + 3600)
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset}
    body = {"message": "API rate limit exceeded for installation ID 1."}
    double.inject("GET", r"/issues/1$", 403, headers=headers, body=body)
    with pytest.raises(GitHubError, match="rate limited"):
        go(auth, lambda port: port.get_issue(REPO, 1))
    assert sleeps.waits == []


def test_client_errors_are_not_retried() -> None:
    """A 422 is an answer, not a hiccup."""
    _fake, double, auth, sleeps = setup()
    double.inject("POST", r"/issues/1/comments$", 422, body={"message": "Body is too long"})
    with pytest.raises(GitHubError, match="too long"):
        go(auth, lambda port: port.create_comment(REPO, 1, "x"))
    assert sleeps.waits == []


def test_installation_token_is_minted_once_and_cached() -> None:
    """Many calls, one access-token request (githubkit's cache, owned by this AppAuth)."""
    _fake, double, auth, _ = setup()

    async def use(port: GitHubPort) -> None:
        for _ in range(5):
            await port.get_issue(REPO, 1)

    go(auth, use)
    assert double.tokens_minted == 1
    tokens = [r for r in double.requests if r[1].endswith("/access_tokens")]
    assert len(tokens) == 1


def test_the_installation_is_looked_up_when_a_delivery_lacks_it() -> None:
    """No installation id in the payload: GET /repos/{o}/{r}/installation with the JWT."""
    _fake, double, auth, _ = setup()

    async def main() -> int:
        port = await auth.port_for(None, REPO)
        return (await port.get_issue(REPO, 1)).number

    assert asyncio.run(main()) == 1
    assert ("GET", "/repos/Codertocat/Hello-World/installation") in double.requests


def test_the_app_learns_its_own_login() -> None:
    """GET /app gives the slug; the bot login is <slug>[bot]."""
    _, _, auth, _ = setup()
    assert asyncio.run(auth.app_login()) == "magi-app[bot]"


def test_every_port_method_has_a_permission_and_an_adapter() -> None:
    """CALLS lists each port method; the adapter and the fake implement all of them."""
    methods = {n for n in dir(GitHubPort) if not n.startswith("_")}
    assert methods == set(CALLS)
    for name in methods:
        assert callable(getattr(GitHubKitPort, name))
        assert callable(getattr(FakeGitHub, name))


def test_requests_carry_typed_bodies() -> None:
    """The adapter sends the JSON GitHub documents (here: a ref's body)."""
    _fake, double, auth, _ = setup()
    sent: list[dict[str, Any]] = []
    original = double.__call__

    async def spy(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/git/refs"):
            sent.append(json.loads(request.content))
        return await original(request)

    auth = AppAuth("1", pem(), API, async_transport=httpx.MockTransport(spy))
    go(auth, lambda port: port.create_ref(REPO, "refs/magi/claims/issue-3", "0" * 40))
    assert sent == [{"ref": "refs/magi/claims/issue-3", "sha": "0" * 40}]


def test_the_app_over_http_survives_5xx_rate_limits_and_timeouts() -> None:
    """A labeled delivery through the real adapter, with GitHub failing on the way: one run."""
    from github_helpers import SETTINGS, deliver, labeled
    from magi.app import create_app

    fake, double, auth, sleeps = setup()
    w = fake.world(REPO)
    w.permissions["Codertocat"] = "write"
    double.timeout("GET", r"/contents/", times=1)
    double.inject("POST", r"/git/refs$", 502, times=2)
    body = {"message": "You have exceeded a secondary rate limit."}
    double.inject("POST", r"/issues/1/comments$", 403, headers={"retry-after": "3"}, body=body)
    double.inject("POST", r"/dispatches$", 503, times=1)
    app = create_app(SETTINGS, ports=auth.port_for, app_login="magi-app")

    async def twice() -> list[int]:
        first = await deliver(app, "issues", labeled())
        second = await deliver(app, "issues", labeled())  # a redelivery
        return [first.status_code, second.status_code]

    assert asyncio.run(twice()) == [200, 200]
    assert len(w.dispatches) == 1
    assert len(fake.comments_on(REPO, 1)) == 1
    assert 3.0 in sleeps.waits
    assert len(sleeps.waits) == 5
    double.assert_clean()


def test_a_pull_requests_reviews_are_read_over_http() -> None:
    """GET /repos/{o}/{r}/pulls/{n}/reviews: who and the state, in the order submitted."""
    fake, double, auth, _ = setup()
    fake.add_pull(REPO, 7, "magi/r/A", "a" * 40)
    fake.add_review(REPO, 7, "octocat", "CHANGES_REQUESTED")
    fake.add_review(REPO, 7, "hubot", "APPROVED")

    async def reviews(port: GitHubPort) -> list[tuple[str, str]]:
        return [(r.user.login if r.user else "", r.state) for r in await port.list_reviews(REPO, 7)]

    assert go(auth, reviews) == [("octocat", "CHANGES_REQUESTED"), ("hubot", "APPROVED")]
    double.assert_clean()
