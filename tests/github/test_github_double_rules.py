"""The doubles refuse what GitHub refuses: merging what cannot merge, checks GitHub would
not take. Each rule sits beside its doc URL in ``magi.testing.github``."""

from __future__ import annotations

import asyncio

import pytest

from github_helpers import REPO, go, setup
from magi.github.port import GitHubError
from magi.testing.github import FakeGitHub


@pytest.mark.parametrize(
    "fields", [{"draft": True}, {"mergeable": False}, {"state": "closed"}], ids=str
)
def test_a_pr_that_cannot_merge_is_refused_with_405(fields):
    """pulls/merge: 405 for a draft, a conflicting or a closed PR, over HTTP too."""
    fake, double, auth, _ = setup()
    fake.add_pull(REPO, 5, "magi/r/A", "a" * 40, **fields)
    with pytest.raises(GitHubError) as info:
        go(auth, lambda port: port.merge_pull(REPO, 5, sha="a" * 40, method="squash", title=None))
    assert info.value.status == 405
    assert not fake.world(REPO).merges
    double.assert_clean()


@pytest.mark.parametrize(
    ("status", "conclusion"),
    [("completed", "green"), ("completed", None), ("done", "success"), ("completed", "stale")],
)
def test_a_check_github_would_not_take_is_refused(status, conclusion):
    """An unknown conclusion or status, a completed check without a conclusion: 422."""
    fake = FakeGitHub()
    with pytest.raises(GitHubError) as info:
        asyncio.run(
            fake.create_check_run(
                REPO, name="magi", head_sha="a" * 40, status=status, conclusion=conclusion
            )
        )
    assert info.value.status == 422
    assert not fake.world(REPO).checks
