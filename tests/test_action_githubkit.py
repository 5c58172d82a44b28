"""Publish's extra calls over githubkit, against the HTTP double: real requests, real shapes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from githubkit import GitHub, TokenAuthStrategy

from magi.action.githubkit_port import GithubkitPublishPort
from magi.github.models import Repo
from magi.testing.action import FakePublishGitHub
from magi.testing.github_http import GitHubHTTP
from magi.testing.github_routes import ROUTES, route

API = "https://api.github.test"
REPO = Repo(owner="octo", name="widgets")
C = "/repos/{owner}/{repo}"


def _issue(i: Any) -> dict[str, Any]:
    labels = [{"name": lb.name} for lb in i.labels]
    return {"number": i.number, "title": i.title, "body": i.body, "labels": labels}


async def _create_issue(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    b = json.loads(rq.content)
    fake = d.fake
    assert isinstance(fake, FakePublishGitHub)
    made = await fake.create_issue(repo, title=b["title"], body=b["body"], labels=b["labels"])
    return 201, _issue(made)


async def _list_issues(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    fake = d.fake
    assert isinstance(fake, FakePublishGitHub)
    assert rq.url.params.get("state") == "all"
    labels = str(rq.url.params.get("labels") or "").split(",")
    page = int(rq.url.params.get("page") or 1)
    found = await fake.list_issues(repo, labels=[x for x in labels if x])
    return 200, [_issue(i) for i in found] if page == 1 else []


if not any(t == C + "/issues" for _, t, _ in ROUTES):  # the double's routes are module-wide
    route("POST", C + "/issues")(_create_issue)
    route("GET", C + "/issues")(_list_issues)


def _port(fake: FakePublishGitHub, graphql: list[dict[str, Any]]) -> GithubkitPublishPort:
    double = GitHubHTTP(fake)

    async def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/graphql"):
            graphql.append(json.loads(request.content))
            return httpx.Response(200, json={"data": {"x": {"clientMutationId": None}}})
        return await double(request)

    gh = GitHub(
        TokenAuthStrategy("ghs_test"),
        base_url=API + "/",
        async_transport=httpx.MockTransport(handler),
        auto_retry=False,
        http_cache=False,
    )
    return GithubkitPublishPort(api_url=API, token="ghs_test", gh=gh)


def test_follow_ups_are_filed_and_found_by_label_over_http():
    """POST and GET /repos/{o}/{r}/issues: the labels go as GitHub expects them."""
    fake = FakePublishGitHub()
    fake.add_issue(REPO, 1, "the task")
    port = _port(fake, [])

    async def go() -> list[int]:
        made = await port.create_issue(REPO, title="t", body="b", labels=["magi:follow-up"])
        assert made.number == 2
        return [i.number for i in await port.list_issues(REPO, labels=["magi:follow-up"])]

    assert asyncio.run(go()) == [2]


def test_a_draft_is_turned_ready_through_graphql():
    """REST cannot un-draft a PR: the port sends markPullRequestReadyForReview by node id."""
    fake = FakePublishGitHub()
    fake.add_pull(REPO, 5, "magi/r/A", "a" * 40, draft=True)
    sent: list[dict[str, Any]] = []
    port = _port(fake, sent)
    asyncio.run(port.set_draft(REPO, 5, False))
    assert len(sent) == 1
    assert "markPullRequestReadyForReview" in sent[0]["query"]
    assert sent[0]["variables"]["id"]
