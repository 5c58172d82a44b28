"""``PublishPort`` over githubkit, for the publish job's installation token.

The App's ``GitHubKitPort`` (one retry layer, ``.json()`` reads) plus publish's extras.
REST cannot turn a draft ready for review, so ``set_draft`` uses GraphQL
(``markPullRequestReadyForReview`` / ``convertPullRequestToDraft``).
https://docs.github.com/en/graphql/reference/mutations#markpullrequestreadyforreview
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from githubkit import GitHub, TokenAuthStrategy
from githubkit.cache import MemCacheStrategy

from magi.github.githubkit_port import GitHubKitPort
from magi.github.models import Issue, PullRequest, Repo
from magi.github.port import GitHubError

__all__ = ["GithubkitPublishPort"]

_READY = """mutation($id: ID!) {
  markPullRequestReadyForReview(input: {pullRequestId: $id}) { clientMutationId }
}"""
_DRAFT = """mutation($id: ID!) {
  convertPullRequestToDraft(input: {pullRequestId: $id}) { clientMutationId }
}"""


class GithubkitPublishPort(GitHubKitPort):
    """The GitHub port plus follow-up issues and drafts, for one token."""

    def __init__(self, *, api_url: str, token: str, gh: GitHub[Any] | None = None) -> None:
        client = gh or GitHub(
            TokenAuthStrategy(token),
            base_url=api_url.rstrip("/") + "/",
            auto_retry=False,  # GitHubKitPort is the one retry layer
            http_cache=False,
            cache_strategy=MemCacheStrategy(),
        )
        super().__init__(client)

    async def create_issue(
        self, repo: Repo, *, title: str, body: str, labels: Sequence[str]
    ) -> Issue:
        r = self.gh.rest.issues
        data = await self._call(
            r.async_create, repo.owner, repo.name, title=title, body=body, labels=list(labels)
        )
        return self._parse(Issue, data)

    async def list_issues(self, repo: Repo, *, labels: Sequence[str]) -> list[Issue]:
        r = self.gh.rest.issues
        items = await self._pages(
            r.async_list_for_repo, repo.owner, repo.name, state="all", labels=",".join(labels)
        )
        return [self._parse(Issue, i) for i in items if not i.get("pull_request")]

    async def set_draft(self, repo: Repo, number: int, draft: bool) -> PullRequest:
        pull = await self._call(self.gh.rest.pulls.async_get, repo.owner, repo.name, number)
        node_id = (pull or {}).get("node_id")
        if not node_id:
            raise GitHubError(f"pull request #{number} has no node id", status=0)
        try:
            await self.gh.async_graphql(_DRAFT if draft else _READY, {"id": node_id})
        except Exception as exc:  # githubkit raises GraphQLFailed or RequestFailed here
            raise GitHubError(f"could not change #{number}'s draft state: {exc}") from exc
        return await self.get_pull(repo, number)
