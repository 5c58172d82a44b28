"""The last door before GitHub: every body magi writes passes ``Seal.clean`` and the limit.

Each surface gates outside text where it builds a comment (``magi.core.threads.posting``); this
wrapper holds whatever was missed. Every comment, PR body, issue body and check summary
that the App or a publishing job sends has each ``<!-- magi:`` escaped that is not a whole
marker sealed by magi's own key, and is cut to GitHub's 65,536 characters at a line, so a
long quote is answered (shortened) instead of refused with 422 and never answered.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, cast

from magi.core.threads.markers import Seal
from magi.core.threads.posting import LIMIT, fit
from magi.github.models import CheckRun, Comment, Issue, PullRequest, Repo
from magi.github.port import GitHubPort

__all__ = ["SealedPort", "sealed"]

_TRAILING = re.compile(r"\s*<!-- magi:[a-z-]+(?: [a-z_-]+=[^\s>]*)* -->\s*\Z")


class SealedPort:
    """``GitHubPort`` with every written body cleaned and fitted; other calls pass through."""

    def __init__(self, inner: GitHubPort, seal: Seal, limit: int = LIMIT) -> None:
        self.inner, self.seal, self.limit = inner, seal, limit

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def body(self, text: str) -> str:
        """``text`` cleaned; when over the limit, cut before its trailing markers (the
        state the App finds the comment by), which are kept whole after the cut."""
        text = self.seal.clean(text)[0]
        if len(text.encode("utf-16-le")) // 2 <= self.limit:
            return text
        tail = ""
        while (m := _TRAILING.search(text)) and self.seal.read(m.group(0)):
            tail = m.group(0) + tail
            text = text[: m.start()]
        room = self.limit - len(tail.encode("utf-16-le")) // 2 - 2
        return fit(text, room, "the workflow run's log")[0].rstrip("\n") + "\n\n" + tail.strip()

    async def create_comment(self, repo: Repo, number: int, body: str) -> Comment:
        return await self.inner.create_comment(repo, number, self.body(body))

    async def update_comment(self, repo: Repo, comment_id: int, body: str) -> Comment:
        return await self.inner.update_comment(repo, comment_id, self.body(body))

    async def create_pull(
        self, repo: Repo, *, title: str, head: str, base: str, body: str, draft: bool
    ) -> PullRequest:
        return await self.inner.create_pull(
            repo, title=title, head=head, base=base, body=self.body(body), draft=draft
        )

    async def update_pull(
        self,
        repo: Repo,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        state: str | None = None,
    ) -> PullRequest:
        text = None if body is None else self.body(body)
        return await self.inner.update_pull(repo, number, title=title, body=text, state=state)

    async def create_issue(
        self, repo: Repo, *, title: str, body: str, labels: Sequence[str]
    ) -> Issue:
        return await self.inner.create_issue(repo, title=title, body=self.body(body), labels=labels)

    async def create_check_run(
        self,
        repo: Repo,
        *,
        name: str,
        head_sha: str,
        status: str,
        conclusion: str | None = None,
        summary: str = "",
        details_url: str | None = None,
    ) -> CheckRun:
        return await self.inner.create_check_run(
            repo,
            name=name,
            head_sha=head_sha,
            status=status,
            conclusion=conclusion,
            summary=self.body(summary),
            details_url=details_url,
        )

    async def update_check_run(
        self,
        repo: Repo,
        check_run_id: int,
        *,
        status: str,
        conclusion: str | None = None,
        summary: str = "",
        details_url: str | None = None,
    ) -> CheckRun:
        return await self.inner.update_check_run(
            repo,
            check_run_id,
            status=status,
            conclusion=conclusion,
            summary=self.body(summary),
            details_url=details_url,
        )


def sealed(port: GitHubPort, seal: Seal) -> GitHubPort:
    """``port`` behind the last door (a port already behind it is returned as it is)."""
    if isinstance(port, SealedPort):
        return cast(GitHubPort, port)
    return cast(GitHubPort, SealedPort(port, seal))
