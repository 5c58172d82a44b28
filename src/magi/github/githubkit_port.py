"""The GitHub port over githubkit: typed requests, ``.json()`` reads, retried in one layer.

Each method is one typed githubkit call wrapped in ``magi.github.retry.Retry.call`` and
parsed into ``magi.github.models``; answers that are values rather than failures (a ref
that exists, a file that is absent) are turned into them here.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

from githubkit import GitHub, TokenAuthStrategy
from githubkit.cache import MemCacheStrategy
from githubkit.response import Response
from pydantic import ValidationError

from magi.github.job_log import job_log_tail
from magi.github.models import (
    Activity,
    Blob,
    BranchRule,
    CheckRun,
    CombinedStatus,
    Comment,
    Commit,
    Content,
    Dispatch,
    GitCommit,
    GitRef,
    GitTree,
    Issue,
    MergeResult,
    Permission,
    PullRequest,
    PullReview,
    Repo,
    TreeEntry,
    WorkflowJob,
    WorkflowRun,
)
from magi.github.port import GitHubError
from magi.github.retry import Notice, Retry

M = TypeVar("M")
# REST cannot change a PR's draft state (PATCH /pulls/{n} ignores `draft`): GraphQL can.
# https://docs.github.com/en/graphql/reference/mutations#markpullrequestreadyforreview
# https://docs.github.com/en/graphql/reference/mutations#convertpullrequesttodraft
READY_FOR_REVIEW = """mutation($id: ID!) {
  markPullRequestReadyForReview(input: {pullRequestId: $id}) { pullRequest { number isDraft } }
}"""
TO_DRAFT = """mutation($id: ID!) {
  convertPullRequestToDraft(input: {pullRequestId: $id}) { pullRequest { number isDraft } }
}"""
# https://docs.github.com/en/graphql/reference/objects#pullrequest (mergeCommit)
MERGE_COMMIT = """query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) { pullRequest(number: $number) { mergeCommit { oid } } }
}"""
# A merge queue takes a PR only through GraphQL (the merge API answers 405).
# https://docs.github.com/en/graphql/reference/mutations#enqueuepullrequest
ENQUEUE = """mutation($id: ID!, $oid: GitObjectID!) {
  enqueuePullRequest(input: {pullRequestId: $id, expectedHeadOid: $oid}) {
    mergeQueueEntry { position state }
  }
}"""
PAGE = 100
MAX_PAGES = 20


class GitHubKitPort:
    """``GitHubPort`` for one installation, over a githubkit client."""

    def __init__(
        self,
        gh: GitHub[Any],
        *,
        attempts: int = 5,
        max_wait: float = 120.0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        notice: Notice | None = None,
    ) -> None:
        self.gh = gh
        self.retry = Retry(attempts, max_wait, sleep, notice)

    async def _call(self, fn: Callable[..., Awaitable[Response[Any]]], *a: Any, **kw: Any) -> Any:
        return await self.retry.call(fn, *a, **kw)

    async def _pages(
        self,
        fn: Callable[..., Awaitable[Response[Any]]],
        *a: Any,
        key: str | None = None,
        **kw: Any,
    ) -> list[Any]:
        items: list[Any] = []
        for page in range(1, MAX_PAGES + 1):
            data = await self._call(fn, *a, per_page=PAGE, page=page, **kw)
            chunk = (data or {}).get(key, []) if key else (data or [])
            items.extend(chunk)
            if len(chunk) < PAGE:
                break
        return items

    @staticmethod
    def _parse(model: type[M], data: Any) -> M:
        try:
            return model.model_validate(data)  # type: ignore[attr-defined, no-any-return]
        except ValidationError as exc:
            raise GitHubError(
                f"GitHub answered an unexpected shape: {exc.errors()[0]['msg']}"
            ) from exc

    # -- issues and comments -----------------------------------------------------------
    async def create_comment(self, repo: Repo, number: int, body: str) -> Comment:
        r = self.gh.rest.issues
        data = await self._call(r.async_create_comment, repo.owner, repo.name, number, body=body)
        return self._parse(Comment, data)

    async def update_comment(self, repo: Repo, comment_id: int, body: str) -> Comment:
        r = self.gh.rest.issues
        data = await self._call(
            r.async_update_comment, repo.owner, repo.name, comment_id, body=body
        )
        return self._parse(Comment, data)

    async def list_comments(self, repo: Repo, number: int) -> list[Comment]:
        r = self.gh.rest.issues
        items = await self._pages(r.async_list_comments, repo.owner, repo.name, number)
        return [self._parse(Comment, c) for c in items]

    async def react_to_comment(self, repo: Repo, comment_id: int, content: str) -> None:
        r = self.gh.rest.reactions
        await self._call(
            r.async_create_for_issue_comment, repo.owner, repo.name, comment_id, content=content
        )

    async def react_to_issue(self, repo: Repo, number: int, content: str) -> None:
        r = self.gh.rest.reactions
        await self._call(r.async_create_for_issue, repo.owner, repo.name, number, content=content)

    async def add_labels(self, repo: Repo, number: int, labels: Sequence[str]) -> None:
        r = self.gh.rest.issues
        await self._call(r.async_add_labels, repo.owner, repo.name, number, labels=list(labels))

    async def remove_label(self, repo: Repo, number: int, name: str) -> None:
        r = self.gh.rest.issues
        await self._call(r.async_remove_label, repo.owner, repo.name, number, name)

    async def get_issue(self, repo: Repo, number: int) -> Issue:
        data = await self._call(self.gh.rest.issues.async_get, repo.owner, repo.name, number)
        return self._parse(Issue, data)

    async def close_issue(self, repo: Repo, number: int) -> Issue:
        r = self.gh.rest.issues
        data = await self._call(r.async_update, repo.owner, repo.name, number, state="closed")
        return self._parse(Issue, data)

    async def permission(self, repo: Repo, login: str) -> Permission:
        r = self.gh.rest.repos
        try:
            data = await self._call(
                r.async_get_collaborator_permission_level, repo.owner, repo.name, login
            )
        except GitHubError as exc:
            if exc.status == 404:  # not a collaborator at all
                return Permission(permission="none")
            raise
        return self._parse(Permission, data)

    # -- contents and refs -------------------------------------------------------------
    async def get_content(self, repo: Repo, path: str, ref: str) -> Content | None:
        r = self.gh.rest.repos
        try:
            data = await self._call(r.async_get_content, repo.owner, repo.name, path, ref=ref)
        except GitHubError as exc:
            if exc.status == 404:
                return None
            raise
        if not isinstance(data, dict) or data.get("type") != "file":
            return None
        raw = base64.b64decode(str(data.get("content", "")))
        return Content(path=path, sha=str(data.get("sha", "")), text=raw.decode("utf-8", "replace"))

    async def get_commit(self, repo: Repo, sha: str) -> Commit:
        data = await self._call(
            self.gh.rest.repos.async_get_commit, repo.owner, repo.name, sha, per_page=1
        )
        try:
            return Commit.from_api(data)
        except (KeyError, TypeError, ValidationError) as exc:
            raise GitHubError("GitHub answered an unexpected commit shape") from exc

    @staticmethod
    def _ref(data: Any) -> GitRef:
        return GitRef(ref=data["ref"], sha=data["object"]["sha"])

    async def create_ref(self, repo: Repo, ref: str, sha: str) -> bool:
        try:
            await self._call(
                self.gh.rest.git.async_create_ref, repo.owner, repo.name, ref=ref, sha=sha
            )
        except GitHubError as exc:
            if exc.status == 422 and "exists" in exc.message.lower():
                return False
            raise
        return True

    async def get_ref(self, repo: Repo, ref: str) -> GitRef | None:
        try:
            data = await self._call(
                self.gh.rest.git.async_get_ref, repo.owner, repo.name, ref.removeprefix("refs/")
            )
        except GitHubError as exc:
            if exc.status == 404:
                return None
            raise
        return self._ref(data)

    async def delete_ref(self, repo: Repo, ref: str) -> bool:
        try:
            await self._call(
                self.gh.rest.git.async_delete_ref, repo.owner, repo.name, ref.removeprefix("refs/")
            )
        except GitHubError as exc:
            if exc.status in {404, 422}:
                return False
            raise
        return True

    async def update_ref(self, repo: Repo, ref: str, sha: str, *, force: bool) -> GitRef:
        r = self.gh.rest.git
        data = await self._call(
            r.async_update_ref,
            repo.owner,
            repo.name,
            ref.removeprefix("refs/"),
            sha=sha,
            force=force,
        )
        return self._ref(data)

    async def matching_refs(self, repo: Repo, prefix: str) -> list[GitRef]:
        r = self.gh.rest.git
        data = await self._call(
            r.async_list_matching_refs, repo.owner, repo.name, prefix.removeprefix("refs/")
        )
        return [self._ref(d) for d in data or []]

    async def list_activities(self, repo: Repo, ref: str) -> list[Activity]:
        # The endpoint pages by cursor (before/after), not by number; the gate needs only
        # the newest changes of one branch, so one page of the newest is read.
        data = await self._call(
            self.gh.rest.repos.async_list_activities,
            repo.owner,
            repo.name,
            ref=ref,
            direction="desc",
            per_page=PAGE,
        )
        try:
            return [Activity.from_api(d) for d in data or []]
        except (KeyError, TypeError, AttributeError, ValidationError) as exc:
            raise GitHubError("GitHub answered an unexpected activity shape") from exc

    async def branch_rules(self, repo: Repo, branch: str) -> list[BranchRule]:
        items = await self._pages(
            self.gh.rest.repos.async_get_branch_rules, repo.owner, repo.name, branch
        )
        return [self._parse(BranchRule, r) for r in items]

    # -- the runner ---------------------------------------------------------------------
    async def dispatch_workflow(
        self, repo: Repo, workflow: str, ref: str, inputs: Mapping[str, str]
    ) -> Dispatch:
        r = self.gh.rest.actions
        data = await self._call(
            r.async_create_workflow_dispatch,
            repo.owner,
            repo.name,
            workflow,
            ref=ref,
            inputs=dict(inputs),
        )
        return self._parse(Dispatch, data or {})

    async def list_commits(
        self, repo: Repo, ref: str, *, since: datetime | None = None
    ) -> list[GitCommit]:
        kw: dict[str, Any] = {"sha": ref}
        if since is not None:
            kw["since"] = since.isoformat()
        data = await self._pages(self.gh.rest.repos.async_list_commits, repo.owner, repo.name, **kw)
        try:
            return [
                GitCommit.from_api({**d["commit"], "sha": d["sha"], **_parents(d)}) for d in data
            ]
        except (KeyError, TypeError, ValidationError) as exc:
            raise GitHubError("GitHub answered an unexpected commit list shape") from exc

    async def list_workflow_runs(
        self, repo: Repo, workflow: str, *, status: str | None = None
    ) -> list[WorkflowRun]:
        r = self.gh.rest.actions
        kw: dict[str, Any] = {"status": status} if status else {}
        items = await self._pages(
            r.async_list_workflow_runs, repo.owner, repo.name, workflow, key="workflow_runs", **kw
        )
        return [self._parse(WorkflowRun, w) for w in items]

    async def cancel_workflow_run(self, repo: Repo, run_id: int) -> bool:
        try:
            await self._call(
                self.gh.rest.actions.async_cancel_workflow_run, repo.owner, repo.name, run_id
            )
        except GitHubError as exc:
            if exc.status == 409:  # "Cannot cancel a workflow run that is completed."
                return False
            raise
        return True

    async def rerun_failed_jobs(self, repo: Repo, run_id: int) -> None:
        await self._call(
            self.gh.rest.actions.async_re_run_workflow_failed_jobs, repo.owner, repo.name, run_id
        )

    # -- pull requests -----------------------------------------------------------------
    async def get_pull(self, repo: Repo, number: int) -> PullRequest:
        return self._parse(
            PullRequest,
            await self._call(self.gh.rest.pulls.async_get, repo.owner, repo.name, number),
        )

    async def list_pulls(
        self, repo: Repo, *, state: str = "open", head: str | None = None
    ) -> list[PullRequest]:
        kw: dict[str, Any] = {"head": head} if head else {}
        items = await self._pages(
            self.gh.rest.pulls.async_list, repo.owner, repo.name, state=state, **kw
        )
        return [self._parse(PullRequest, p) for p in items]

    async def list_reviews(self, repo: Repo, number: int) -> list[PullReview]:
        r = self.gh.rest.pulls
        items = await self._pages(r.async_list_reviews, repo.owner, repo.name, number)
        return [self._parse(PullReview, v) for v in items]

    async def create_pull(
        self, repo: Repo, *, title: str, head: str, base: str, body: str, draft: bool
    ) -> PullRequest:
        r = self.gh.rest.pulls
        data = await self._call(
            r.async_create,
            repo.owner,
            repo.name,
            title=title,
            head=head,
            base=base,
            body=body,
            draft=draft,
        )
        return self._parse(PullRequest, data)

    async def update_pull(
        self,
        repo: Repo,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        state: str | None = None,
    ) -> PullRequest:
        fields = {
            k: v for k, v in {"title": title, "body": body, "state": state}.items() if v is not None
        }
        data = await self._call(
            self.gh.rest.pulls.async_update, repo.owner, repo.name, number, **fields
        )
        return self._parse(PullRequest, data)

    async def merge_pull(
        self, repo: Repo, number: int, *, sha: str, method: str, title: str | None
    ) -> MergeResult:
        kw: dict[str, Any] = {"commit_title": title} if title else {}
        data = await self._call(
            self.gh.rest.pulls.async_merge,
            repo.owner,
            repo.name,
            number,
            sha=sha,
            merge_method=method,
            **kw,
        )
        return self._parse(MergeResult, data)

    # -- checks and statuses -----------------------------------------------------------
    async def list_check_runs(self, repo: Repo, ref: str) -> list[CheckRun]:
        r = self.gh.rest.checks
        items = await self._pages(
            r.async_list_for_ref, repo.owner, repo.name, ref, key="check_runs", filter_="latest"
        )
        return [self._parse(CheckRun, c) for c in items]

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
        kw: dict[str, Any] = {"conclusion": conclusion} if conclusion else {}
        if details_url:
            kw["details_url"] = details_url
        data = await self._call(
            self.gh.rest.checks.async_create,
            repo.owner,
            repo.name,
            name=name,
            head_sha=head_sha,
            status=status,
            output={"title": name, "summary": summary or name},
            **kw,
        )
        return self._parse(CheckRun, data)

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
        kw: dict[str, Any] = {"conclusion": conclusion} if conclusion else {}
        if details_url:
            kw["details_url"] = details_url
        if summary:
            kw["output"] = {"title": "magi", "summary": summary}
        data = await self._call(
            self.gh.rest.checks.async_update,
            repo.owner,
            repo.name,
            check_run_id,
            status=status,
            **kw,
        )
        return self._parse(CheckRun, data)

    async def combined_status(self, repo: Repo, ref: str) -> CombinedStatus:
        r = self.gh.rest.repos
        data = await self._call(
            r.async_get_combined_status_for_ref, repo.owner, repo.name, ref, per_page=PAGE
        )
        return self._parse(CombinedStatus, data)

    # -- git objects (the Git Data API) ---------------------------------------------------
    # https://docs.github.com/en/rest/git/commits, .../git/trees, .../git/blobs
    async def get_git_commit(self, repo: Repo, sha: str) -> GitCommit:
        data = await self._call(self.gh.rest.git.async_get_commit, repo.owner, repo.name, sha)
        try:
            return GitCommit.from_api(data)
        except (KeyError, TypeError, ValidationError) as exc:
            raise GitHubError("GitHub answered an unexpected git commit shape") from exc

    async def get_tree(self, repo: Repo, sha: str) -> GitTree:
        data = await self._call(self.gh.rest.git.async_get_tree, repo.owner, repo.name, sha)
        return self._parse(GitTree, data)

    async def get_blob(self, repo: Repo, sha: str) -> Blob:
        data = await self._call(self.gh.rest.git.async_get_blob, repo.owner, repo.name, sha)
        if not isinstance(data, dict) or data.get("encoding") != "base64":
            raise GitHubError(f"GitHub answered blob {sha[:12]} in an unexpected shape")
        try:
            content = base64.b64decode(str(data.get("content", "")))
        except ValueError as exc:
            raise GitHubError(f"GitHub answered blob {sha[:12]} with bad base64") from exc
        return Blob(sha=str(data.get("sha", sha)), content=content)

    async def create_blob(self, repo: Repo, content: bytes) -> str:
        data = await self._call(
            self.gh.rest.git.async_create_blob,
            repo.owner,
            repo.name,
            content=base64.b64encode(content).decode("ascii"),
            encoding="base64",
        )
        if not isinstance(data, dict) or not isinstance(data.get("sha"), str):
            raise GitHubError("GitHub answered a blob without a sha")
        return str(data["sha"])

    async def create_tree(
        self, repo: Repo, entries: Sequence[TreeEntry], *, base_tree: str | None
    ) -> GitTree:
        tree = [{"path": e.path, "mode": e.mode, "type": e.type, "sha": e.sha} for e in entries]
        kw: dict[str, Any] = {"base_tree": base_tree} if base_tree else {}
        data = await self._call(
            self.gh.rest.git.async_create_tree, repo.owner, repo.name, tree=tree, **kw
        )
        return self._parse(GitTree, data)

    async def create_git_commit(
        self, repo: Repo, *, message: str, tree: str, parents: Sequence[str]
    ) -> GitCommit:
        data = await self._call(
            self.gh.rest.git.async_create_commit,
            repo.owner,
            repo.name,
            message=message,
            tree=tree,
            parents=list(parents),
        )
        try:
            return GitCommit.from_api(data)
        except (KeyError, TypeError, ValidationError) as exc:
            raise GitHubError("GitHub answered an unexpected git commit shape") from exc

    # -- publishing: follow-up issues and drafts ----------------------------------------
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
        # GitHub's issue list holds pull requests too (they carry `pull_request`).
        return [self._parse(Issue, i) for i in items if not i.get("pull_request")]

    async def set_draft(self, repo: Repo, number: int, draft: bool) -> PullRequest:
        pull = await self.get_pull(repo, number)
        if not pull.node_id:
            raise GitHubError(f"pull request #{number} has no node id", status=0)
        # githubkit's GraphQL request without its parsing, so the one retry layer covers it.
        answer = await self._call(
            self.gh.graphql._arequest,
            TO_DRAFT if draft else READY_FOR_REVIEW,
            {"id": pull.node_id},
        )
        errors = (answer or {}).get("errors") or []
        if errors:  # GraphQL answers 200 with `errors`; NOT_FOUND is an unknown node id
            first = errors[0] if isinstance(errors[0], dict) else {}
            status = 404 if first.get("type") == "NOT_FOUND" else 422
            raise GitHubError(
                f"could not change #{number}'s draft state: {first.get('message', '?')}",
                status=status,
            )
        return await self.get_pull(repo, number)

    async def merge_commit(self, repo: Repo, number: int) -> str | None:
        answer = await self._call(
            self.gh.graphql._arequest,
            MERGE_COMMIT,
            {"owner": repo.owner, "name": repo.name, "number": number},
        )
        errors = (answer or {}).get("errors") or []
        if errors:
            first = errors[0] if isinstance(errors[0], dict) else {}
            status = 404 if first.get("type") == "NOT_FOUND" else 422
            raise GitHubError(
                f"could not read #{number}'s merge commit: {first.get('message', '?')}",
                status=status,
            )
        data = ((answer or {}).get("data") or {}).get("repository") or {}
        commit = (data.get("pullRequest") or {}).get("mergeCommit") or {}
        oid = commit.get("oid")
        return oid if isinstance(oid, str) else None

    async def enqueue_pull(self, repo: Repo, number: int, *, sha: str) -> int:
        pull = await self.get_pull(repo, number)
        if not pull.node_id:
            raise GitHubError(f"pull request #{number} has no node id", status=0)
        answer = await self._call(
            self.gh.graphql._arequest, ENQUEUE, {"id": pull.node_id, "oid": sha}
        )
        errors = (answer or {}).get("errors") or []
        if errors:  # GraphQL answers 200 with `errors`
            first = errors[0] if isinstance(errors[0], dict) else {}
            status = 404 if first.get("type") == "NOT_FOUND" else 422
            raise GitHubError(
                f"could not add #{number} to the merge queue: {first.get('message', '?')}",
                status=status,
            )
        data = (answer or {}).get("data") or answer or {}
        entry = ((data.get("enqueuePullRequest") or {}).get("mergeQueueEntry")) or {}
        return int(entry.get("position") or 0)

    # -- progress: a workflow run and its jobs ------------------------------------------
    async def get_workflow_run(self, repo: Repo, run_id: int) -> WorkflowRun:
        r = self.gh.rest.actions
        return self._parse(
            WorkflowRun, await self._call(r.async_get_workflow_run, repo.owner, repo.name, run_id)
        )

    async def list_run_jobs(self, repo: Repo, run_id: int) -> list[WorkflowJob]:
        r = self.gh.rest.actions
        items = await self._pages(
            r.async_list_jobs_for_workflow_run, repo.owner, repo.name, run_id, key="jobs"
        )
        return [self._parse(WorkflowJob, j) for j in items]

    async def job_log_tail(self, repo: Repo, job_id: int, *, max_bytes: int) -> str | None:
        # By hand, not through _call: a 302 to a signed URL (see magi.github.job_log).
        return await job_log_tail(self.gh, repo, job_id, max_bytes=max_bytes)


async def annotate(seconds: float, words: str) -> None:
    """A long rate-limit wait in a job, as a warning annotation on the workflow run: said
    there and not on the issue, since a write during a content-creation limit is what the
    limit refuses, and GitHub warns that requests made while limited may get an
    integration banned.
    https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands#setting-a-warning-message
    """
    print(f"::warning title=GitHub rate limit::{words}", flush=True)


def token_port(api_url: str, token: str) -> GitHubKitPort:
    """The port for one installation token (the publish job's), githubkit's retry off;
    a long rate-limit wait is said as an annotation (``annotate``)."""
    client: GitHub[Any] = GitHub(
        TokenAuthStrategy(token),
        base_url=api_url.rstrip("/") + "/",
        auto_retry=False,  # GitHubKitPort is the one retry layer
        http_cache=False,
        cache_strategy=MemCacheStrategy(),
    )
    return GitHubKitPort(client, notice=annotate)


def _parents(d: dict[str, Any]) -> dict[str, Any]:
    """A repository commit's parents, as the git commit's ``parents`` field takes them."""
    return {"parents": d.get("parents") or []}
