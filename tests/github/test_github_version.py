"""One REST version, 2026-03-10: githubkit and magi's own requests send it, the double
speaks nothing else and leaves out what that version removed."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from githubkit.versions import LATEST_VERSION

from github_helpers import REPO
from magi.github.port import API_VERSION
from magi.testing.github import FakeGitHub
from magi.testing.github_http import REMOVED, GitHubHTTP

HEADERS = {"Accept": "application/vnd.github+json", "Authorization": "Bearer ghs_x"}


def _get(double: GitHubHTTP, path: str, version: str | None = API_VERSION) -> httpx.Response:
    headers = dict(HEADERS)
    if version is not None:
        headers["X-GitHub-Api-Version"] = version

    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.MockTransport(double)) as client:
            return await client.get(f"https://api.github.test{path}", headers=headers)

    return asyncio.run(go())


def test_magi_speaks_the_version_githubkit_sends():
    """The version in every githubkit request is magi's one version."""
    assert LATEST_VERSION == API_VERSION == "2026-03-10"


def test_a_pull_request_comes_without_what_2026_03_10_removed():
    """GitHub's example holds merge_commit_sha and assignee; this version has neither."""
    fake = FakeGitHub()
    fake.add_pull(REPO, 5, "magi/r/A", "a" * 40)
    double = GitHubHTTP(fake)
    assert "merge_commit_sha" in double.example("GET", "/repos/{owner}/{repo}/pulls/{pull_number}")
    for path in (f"/repos/{REPO.full_name}/pulls/5", f"/repos/{REPO.full_name}/pulls"):
        answer = _get(double, path)
        assert answer.status_code == 200
        for name in REMOVED.values():
            assert f'"{name}"' not in answer.text, (path, name)
    double.assert_clean()


def test_another_version_or_none_is_a_request_outside_the_double():
    """2022-11-28, named or by default (no header), is not the version the double speaks."""
    fake = FakeGitHub()
    fake.add_pull(REPO, 5, "magi/r/A", "a" * 40)
    double = GitHubHTTP(fake)
    for version in ("2022-11-28", None):
        with pytest.raises(AssertionError, match="speaks API 2026-03-10"):
            _get(double, f"/repos/{REPO.full_name}/pulls/5", version)
    assert len(double.unanswered) == 2
