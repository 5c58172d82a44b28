"""A destructive call checks what it destroys: the App deletes only refs under the prefix it
asked GitHub for, whatever a misbehaving API (or proxy) lists back."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import httpx
import pytest
from githubkit import GitHub, TokenAuthStrategy

from github_helpers import NOW, REPO, SEAL, deliver, issue_comment, pr_comment, world
from magi.app import create_app
from magi.core.threads import markers
from magi.github.githubkit_port import GitHubKitPort
from magi.github.models import GitRef
from magi.github.state import refs_under
from magi.testing.github import FakeGitHub
from magi.testing.github_http import GitHubHTTP

SHA = "a" * 40
PR = 7
MATCHING = "/repos/{owner}/{repo}/git/matching-refs/{ref}"
STRANGERS = ("refs/heads/feature-a", "refs/heads/feature-b")  # GitHub's own example


def _lying(double: GitHubHTTP) -> httpx.MockTransport:
    """The double, except that every matching-refs answer also lists GitHub's example refs
    (``refs/heads/feature-a``, ``-b``): what a proxy that drops the path suffix would do."""

    async def handler(request: httpx.Request) -> httpx.Response:
        answer = await double(request)
        if "/git/matching-refs/" not in request.url.path:
            return answer
        extra = double.example("GET", MATCHING)
        return httpx.Response(200, json=[*json.loads(answer.content), *extra])

    return httpx.MockTransport(handler)


def _app(fake: FakeGitHub):  # type: ignore[no-untyped-def]
    double = GitHubHTTP(fake)
    transport = _lying(double)

    async def ports(installation: int | None, repo: object) -> GitHubKitPort:
        gh = GitHub(
            TokenAuthStrategy("ghs_app"),
            base_url="https://api.github.test/",
            async_transport=transport,
            auto_retry=False,
            http_cache=False,
        )
        return GitHubKitPort(gh)

    from github_helpers import SETTINGS, no_sleep

    app = create_app(SETTINGS, ports=ports, clock=lambda: NOW, sleep=no_sleep)  # type: ignore[arg-type]
    app.state.fake = fake
    return app


def _scene() -> FakeGitHub:
    fake = world(FakeGitHub())
    fake.now = NOW - timedelta(minutes=30)
    w = fake.world(REPO)
    body = "Closes #1\n" + SEAL.marker(markers.PR, issue=1, run="r1")
    fake.add_pull(REPO, PR, "magi/r1/A", SHA, title="Fix spelling", body=body)
    w.refs["heads/magi/r1/B"] = "b" * 40
    w.refs["heads/feature-a"] = "c" * 40
    w.refs["heads/feature-b"] = "d" * 40
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    return fake


def test_a_merge_deletes_the_runs_branches_and_never_a_listed_stranger() -> None:
    """After the squash, only `magi/r1/*` goes; feature-a and -b, listed back, stay."""
    fake = _scene()
    asyncio.run(deliver(_app(fake), "issue_comment", pr_comment("merge", number=PR)))
    w = fake.world(REPO)
    assert [m["sha"] for m in w.merges] == [SHA]
    assert not [r for r in w.refs if r.startswith("heads/magi/r1/")]
    assert {"heads/feature-a", "heads/feature-b"} <= set(w.refs)
    assert not [c for c in fake.named("delete_ref") if "feature" in c.args["ref"]]


def test_fold_deletes_only_its_runs_branches() -> None:
    """`/magi fold` on a finished run: its branches, counted honestly; the strangers stay."""
    fake = world(FakeGitHub())
    w = fake.world(REPO)
    mark = SEAL.marker(markers.RUN, run="r2", issue=1)
    fake.keep_comment(REPO, 1, comment_id=1, body=f"started\n{mark}", login="magi-app[bot]")
    w.comments[1][0] = w.comments[1][0].model_copy(
        update={"user": w.comments[1][0].user.model_copy(update={"type": "Bot"})}  # type: ignore[union-attr]
    )
    w.refs["heads/magi/r2/A"] = "1" * 40
    w.refs["heads/feature-a"] = "c" * 40
    w.refs["heads/feature-b"] = "d" * 40
    asyncio.run(deliver(_app(fake), "issue_comment", issue_comment("/magi fold")))
    assert "deleted 1 branch(es)" in fake.comments_on(REPO, 1)[-1]
    assert {"heads/feature-a", "heads/feature-b"} <= set(w.refs)
    assert "heads/magi/r2/A" not in w.refs


@pytest.mark.parametrize(
    ("prefix", "kept"),
    [
        ("heads/magi/r1/", ["refs/heads/magi/r1/A"]),
        ("heads/magi/", ["refs/heads/magi/r1/A"]),
        ("magi/said/7/", []),
        ("heads/", []),  # outside magi's namespaces: nothing
        ("heads/magi/r1", []),  # not `/`-ended: would match magi/r10/...
    ],
)
def test_refs_under_keeps_only_what_the_prefix_names(prefix: str, kept: list[str]) -> None:
    refs = [GitRef(ref=r, sha="0" * 40) for r in ("refs/heads/magi/r1/A", "refs/heads/main")]
    """Only a `/`-ended prefix inside magi's namespaces, and only refs under it."""
    ok, _ = refs_under(refs, prefix)
    assert [r.ref for r in ok] == kept
