"""The Git Data API through the githubkit adapter and the HTTP double: blobs, trees, commits."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from app_ending_helpers import recorded, scene
from app_landing_helpers import pull_event
from github_helpers import API, REPO, SETTINGS, deliver, go, issue_comment, pem, setup, world
from magi.app import create_app
from magi.github.auth import AppAuth
from magi.github.models import TreeEntry
from magi.github.port import GitHubError, GitHubPort
from magi.model.run import RunStatus

RECORD = "magi/runs/20260101-120000-abcd"


def test_a_record_commit_is_read_and_rewritten_through_real_shapes() -> None:
    """commit -> tree -> blob reads back; blob -> tree on base -> commit -> fast-forward."""
    fake, double, auth, _ = setup()
    old = fake.commit_files(REPO, {"run.json": "{}\n", "artifacts/a.txt": "a"})
    fake.world(REPO).refs[RECORD] = old

    async def use(port: GitHubPort) -> dict[str, Any]:
        commit = await port.get_git_commit(REPO, old)
        tree = await port.get_tree(REPO, commit.tree)
        entry = next(e for e in tree.tree if e.path == "run.json")
        blob = await port.get_blob(REPO, entry.sha)
        new_blob = await port.create_blob(REPO, b'{"status": "merged"}\n')
        new_tree = await port.create_tree(
            REPO,
            [TreeEntry(path="run.json", mode="100644", type="blob", sha=new_blob)],
            base_tree=commit.tree,
        )
        new = await port.create_git_commit(
            REPO, message="merged", tree=new_tree.sha, parents=[commit.sha]
        )
        moved = await port.update_ref(REPO, RECORD, new.sha, force=False)
        return {
            "paths": sorted(e.path for e in tree.tree),
            "kinds": sorted(e.type for e in tree.tree),
            "content": blob.content,
            "new": new,
            "moved": moved.sha,
        }

    got = go(auth, use)
    assert got["paths"] == ["artifacts", "run.json"]
    assert got["kinds"] == ["blob", "tree"]
    assert got["content"] == b"{}\n"
    assert got["new"].parents == [old]
    assert got["moved"] == got["new"].sha == fake.world(REPO).refs[RECORD]
    assert fake.file_at(REPO, got["new"].sha, "run.json") == b'{"status": "merged"}\n'
    assert fake.file_at(REPO, got["new"].sha, "artifacts/a.txt") == b"a", "base tree kept"
    double.assert_clean()


def test_a_ref_that_moved_meanwhile_is_not_overwritten() -> None:
    """force=false on a ref a publish moved: GitHub's 422, the publish's commit stays."""
    fake, double, auth, _ = setup()
    old = fake.commit_files(REPO, {"run.json": "1"})
    theirs = fake.commit_files(REPO, {"run.json": "2"}, parent=old)
    mine = fake.commit_files(REPO, {"run.json": "3"}, parent=old)
    fake.world(REPO).refs[RECORD] = theirs
    with pytest.raises(GitHubError) as err:
        go(auth, lambda port: port.update_ref(REPO, RECORD, mine, force=False))
    assert err.value.status == 422
    assert "fast forward" in err.value.message
    assert fake.world(REPO).refs[RECORD] == theirs
    double.assert_clean()


def test_missing_objects_are_404_and_bad_parents_422() -> None:
    """A record pointing at nothing reads as GitHub's 404; a commit on nothing is refused."""
    fake, double, auth, _ = setup()
    with pytest.raises(GitHubError) as err:
        go(auth, lambda port: port.get_git_commit(REPO, "e" * 40))
    assert err.value.status == 404
    tree = fake.commit_files(REPO, {"run.json": "x"})
    with pytest.raises(GitHubError) as err:
        go(
            auth,
            lambda port: port.create_git_commit(REPO, message="m", tree=tree, parents=["e" * 40]),
        )
    assert err.value.status == 422
    double.assert_clean()


def test_writes_send_the_bodies_github_documents() -> None:
    """Blobs go base64; a tree names its base; the ref update says force=false."""
    fake, double, auth, _ = setup()
    old = fake.commit_files(REPO, {"run.json": "{}"})
    fake.world(REPO).refs[RECORD] = old
    sent: dict[str, dict[str, Any]] = {}
    original = double.__call__

    async def spy(request: httpx.Request) -> httpx.Response:
        if request.method in {"POST", "PATCH"}:
            sent[request.url.path.rsplit("/git/", 1)[-1].split("/")[0]] = json.loads(
                request.content
            )
        return await original(request)

    auth = AppAuth("1", pem(), API, async_transport=httpx.MockTransport(spy))

    async def use(port: GitHubPort) -> None:
        commit = await port.get_git_commit(REPO, old)
        blob = await port.create_blob(REPO, "é\n".encode())
        tree = await port.create_tree(
            REPO,
            [TreeEntry(path="run.json", mode="100644", type="blob", sha=blob)],
            base_tree=commit.tree,
        )
        new = await port.create_git_commit(REPO, message="m", tree=tree.sha, parents=[old])
        await port.update_ref(REPO, RECORD, new.sha, force=False)

    go(auth, use)
    assert sent["blobs"] == {"content": "w6kK", "encoding": "base64"}
    assert sent["trees"]["base_tree"] == fake.world(REPO).objects[old].tree  # type: ignore[union-attr]
    assert sent["trees"]["tree"][0]["path"] == "run.json"
    assert sent["commits"]["parents"] == [old]
    assert sent["refs"]["force"] is False
    double.assert_clean()


def test_the_app_over_http_records_a_merge_and_answers_stats_from_records() -> None:
    """Through the real adapter: the closed PR's ending written, /magi stats read back."""
    fake, double, auth, _ = setup()
    scene(world(fake))
    double.inject("PATCH", r"/git/refs/magi/runs/", 502, times=1)  # retried by the one layer
    app = create_app(SETTINGS, ports=auth.port_for, app_login="magi-app")
    fake.world(REPO).pulls[7] = (
        fake.world(REPO).pulls[7].model_copy(update={"state": "closed", "merged": True})
    )
    fake.world(REPO).merge_commits[7] = "c" * 40  # read back through GraphQL's mergeCommit
    asyncio.run(deliver(app, "pull_request", pull_event(fake, "closed")))
    assert recorded(fake).status is RunStatus.MERGED
    merge = recorded(fake).merge
    assert merge is not None
    assert merge.commit == "c" * 40  # API 2026-03-10 has no merge_commit_sha: GraphQL's
    asyncio.run(deliver(app, "issue_comment", issue_comment("/magi stats")))
    reply = fake.comments_on(REPO, 1)[-1]
    assert "**1 recorded run.**" in reply
    assert "`opus-agent`: 100% (1/1, 1 run)" in reply
    double.assert_clean()
