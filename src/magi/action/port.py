"""The calls publish needs beyond ``magi.github.port.GitHubPort``: follow-ups and drafts.

Kept here until the App's port grows them: filing a follow-up issue, listing issues by
label (to find the follow-ups a run already filed), and turning a draft PR ready for review
(GraphQL ``markPullRequestReadyForReview``; REST cannot) or back to a draft.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from magi.github.models import Issue, PullRequest, Repo
from magi.github.port import GitHubPort

__all__ = ["PublishPort"]


class PublishPort(GitHubPort, Protocol):
    """The GitHub port plus what publish alone needs."""

    async def create_issue(
        self, repo: Repo, *, title: str, body: str, labels: Sequence[str]
    ) -> Issue: ...
    async def list_issues(self, repo: Repo, *, labels: Sequence[str]) -> list[Issue]: ...
    async def set_draft(self, repo: Repo, number: int, draft: bool) -> PullRequest: ...
