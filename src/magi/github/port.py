"""The GitHub port: every call magi makes to GitHub, as one ``typing.Protocol``.

One port instance speaks for one installation (one token). Implementations: the githubkit
adapter (``magi.github.githubkit_port``) and the recording fake (``magi.testing.github``).
Callers never see HTTP: answers are ``magi.github.models``; failures are ``GitHubError``
with the status GitHub gave. A few outcomes that are answers rather than failures come back
as values (``create_ref`` -> False when the ref exists, ``get_content``/``get_ref`` -> None on
404, ``delete_ref`` -> False when already gone). Every method name is also a key of
``CALLS``, which says which App permission the call needs (``app.yml`` must grant it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Protocol

from magi.errors import GitHubError as GitHubError
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

# The one REST API version magi speaks, in every request (githubkit 0.16 sends it; its
# schemas are this version's). It removed, among others, a pull request's merge_commit_sha
# and has workflow dispatches answer the run's id. GitHub supports a version at least 24
# months after its successor ships. GHES answers it with 400 until it knows it (see
# app/README.md: GHES is not supported).
# https://docs.github.com/en/rest/about-the-rest-api/api-versions
API_VERSION = "2026-03-10"

# permission -> level each call needs (GitHub App permissions, as in app.yml).
CALLS: Mapping[str, tuple[str, str]] = {
    "create_comment": ("issues", "write"),
    "update_comment": ("issues", "write"),
    "list_comments": ("issues", "read"),
    "react_to_comment": ("issues", "write"),
    "react_to_issue": ("issues", "write"),
    "add_labels": ("issues", "write"),
    "remove_label": ("issues", "write"),
    "get_issue": ("issues", "read"),
    "close_issue": ("issues", "write"),
    "permission": ("metadata", "read"),
    "get_content": ("contents", "read"),
    "get_commit": ("contents", "read"),
    "create_ref": ("contents", "write"),
    "get_ref": ("contents", "read"),
    "delete_ref": ("contents", "write"),
    "update_ref": ("contents", "write"),
    "matching_refs": ("contents", "read"),
    "list_activities": ("metadata", "read"),
    "branch_rules": ("metadata", "read"),
    "list_commits": ("contents", "read"),
    "dispatch_workflow": ("actions", "write"),
    "list_workflow_runs": ("actions", "read"),
    "cancel_workflow_run": ("actions", "write"),
    "rerun_failed_jobs": ("actions", "write"),
    "get_pull": ("pull_requests", "read"),
    "list_pulls": ("pull_requests", "read"),
    "list_reviews": ("pull_requests", "read"),
    "create_pull": ("pull_requests", "write"),
    "update_pull": ("pull_requests", "write"),
    "merge_pull": ("contents", "write"),
    "enqueue_pull": ("contents", "write"),
    "list_check_runs": ("checks", "read"),
    "create_check_run": ("checks", "write"),
    "update_check_run": ("checks", "write"),
    "combined_status": ("statuses", "read"),
    # the Git Data API: run records in refs/magi/runs/<id> (magi.github.records)
    "get_git_commit": ("contents", "read"),
    "get_tree": ("contents", "read"),
    "get_blob": ("contents", "read"),
    "create_blob": ("contents", "write"),
    "create_tree": ("contents", "write"),
    "create_git_commit": ("contents", "write"),
    # publishing and progress (issue 14)
    "create_issue": ("issues", "write"),
    "list_issues": ("issues", "read"),
    "set_draft": ("pull_requests", "write"),
    "merge_commit": ("pull_requests", "read"),
    "get_workflow_run": ("actions", "read"),
    "list_run_jobs": ("actions", "read"),
    "job_log_tail": ("actions", "read"),
}


class GitHubPort(Protocol):
    """Every GitHub call magi makes, for one installation."""

    # issues and comments
    async def create_comment(self, repo: Repo, number: int, body: str) -> Comment: ...
    async def update_comment(self, repo: Repo, comment_id: int, body: str) -> Comment: ...
    async def list_comments(self, repo: Repo, number: int) -> list[Comment]: ...
    async def react_to_comment(self, repo: Repo, comment_id: int, content: str) -> None: ...
    async def react_to_issue(self, repo: Repo, number: int, content: str) -> None: ...
    async def add_labels(self, repo: Repo, number: int, labels: Sequence[str]) -> None: ...
    async def remove_label(self, repo: Repo, number: int, name: str) -> None: ...
    async def get_issue(self, repo: Repo, number: int) -> Issue: ...
    async def close_issue(self, repo: Repo, number: int) -> Issue: ...

    # who may act
    async def permission(self, repo: Repo, login: str) -> Permission: ...

    # contents and refs (claims live at refs/magi/claims/issue-<n>)
    async def get_content(self, repo: Repo, path: str, ref: str) -> Content | None: ...
    async def get_commit(self, repo: Repo, sha: str) -> Commit: ...
    async def create_ref(self, repo: Repo, ref: str, sha: str) -> bool: ...
    async def get_ref(self, repo: Repo, ref: str) -> GitRef | None: ...
    async def delete_ref(self, repo: Repo, ref: str) -> bool: ...
    async def update_ref(self, repo: Repo, ref: str, sha: str, *, force: bool) -> GitRef: ...
    async def matching_refs(self, repo: Repo, prefix: str) -> list[GitRef]: ...
    # what GitHub recorded of a branch's changes (``refs/heads/<b>``), newest first, the
    # first page only: when each push reached GitHub, by GitHub's clock (the merge gate's)
    async def list_activities(self, repo: Repo, ref: str) -> list[Activity]: ...

    async def enqueue_pull(self, repo: Repo, number: int, *, sha: str) -> int:
        """Add PR ``number`` at head ``sha`` to its base's merge queue (GraphQL
        ``enqueuePullRequest``, ``expectedHeadOid``); its position in the queue."""
        ...

    async def rerun_failed_jobs(self, repo: Repo, run_id: int) -> None:
        """Re-run the failed jobs of Actions run ``run_id`` (and what depends on them)."""
        ...

    async def branch_rules(self, repo: Repo, branch: str) -> list[BranchRule]:
        """The rules in force on ``branch`` (rulesets; not classic branch protection, which
        needs administration access to read: its refusals are read from the merge's 405)."""
        ...

    # a branch's history, newest first, bounded (``/magi stats``: do winners stay merged)
    async def list_commits(
        self, repo: Repo, ref: str, *, since: datetime | None = None
    ) -> list[GitCommit]: ...

    # the runner
    async def dispatch_workflow(
        self, repo: Repo, workflow: str, ref: str, inputs: Mapping[str, str]
    ) -> Dispatch: ...
    async def list_workflow_runs(
        self, repo: Repo, workflow: str, *, status: str | None = None
    ) -> list[WorkflowRun]: ...
    # False when the run had already finished (GitHub's 409): nothing was cancelled.
    async def cancel_workflow_run(self, repo: Repo, run_id: int) -> bool: ...

    # pull requests
    async def get_pull(self, repo: Repo, number: int) -> PullRequest: ...
    async def list_pulls(
        self, repo: Repo, *, state: str = "open", head: str | None = None
    ) -> list[PullRequest]: ...
    async def list_reviews(self, repo: Repo, number: int) -> list[PullReview]: ...
    async def create_pull(
        self, repo: Repo, *, title: str, head: str, base: str, body: str, draft: bool
    ) -> PullRequest: ...
    async def update_pull(
        self,
        repo: Repo,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        state: str | None = None,
    ) -> PullRequest: ...
    async def merge_pull(
        self, repo: Repo, number: int, *, sha: str, method: str, title: str | None
    ) -> MergeResult: ...

    # checks and statuses on a commit
    async def list_check_runs(self, repo: Repo, ref: str) -> list[CheckRun]: ...
    async def create_check_run(
        self,
        repo: Repo,
        *,
        name: str,
        head_sha: str,
        status: str,
        conclusion: str | None = None,
        summary: str = "",
        details_url: str | None = None,  # where a person reads more (action_required needs it)
    ) -> CheckRun: ...
    async def update_check_run(
        self,
        repo: Repo,
        check_run_id: int,
        *,
        status: str,
        conclusion: str | None = None,
        summary: str = "",
        details_url: str | None = None,  # where a person reads more (action_required needs it)
    ) -> CheckRun: ...
    async def combined_status(self, repo: Repo, ref: str) -> CombinedStatus: ...

    # git objects (the Git Data API): how the App reads and writes run records without git.
    # update_ref(force=False) on a ref that moved meanwhile is a 422 ("not a fast forward").
    async def get_git_commit(self, repo: Repo, sha: str) -> GitCommit: ...
    async def get_tree(self, repo: Repo, sha: str) -> GitTree: ...
    async def get_blob(self, repo: Repo, sha: str) -> Blob: ...
    async def create_blob(self, repo: Repo, content: bytes) -> str: ...
    async def create_tree(
        self, repo: Repo, entries: Sequence[TreeEntry], *, base_tree: str | None
    ) -> GitTree: ...
    async def create_git_commit(
        self, repo: Repo, *, message: str, tree: str, parents: Sequence[str]
    ) -> GitCommit: ...

    # publishing: follow-up issues, and a PR's draft state (REST cannot change it, so the
    # githubkit adapter uses GraphQL's markPullRequestReadyForReview / convertPullRequestToDraft)
    async def create_issue(
        self, repo: Repo, *, title: str, body: str, labels: Sequence[str]
    ) -> Issue: ...
    async def list_issues(self, repo: Repo, *, labels: Sequence[str]) -> list[Issue]: ...
    async def set_draft(self, repo: Repo, number: int, draft: bool) -> PullRequest: ...
    # A merged PR's commit on its base: REST 2026-03-10 removed ``merge_commit_sha`` from
    # pull requests (changeset remove_pull_request_merge_commit_sha), so it is read from
    # GraphQL's ``PullRequest.mergeCommit`` (None while unmerged).
    async def merge_commit(self, repo: Repo, number: int) -> str | None: ...

    # progress: which issue a workflow run is for (its run-name), and its jobs
    async def get_workflow_run(self, repo: Repo, run_id: int) -> WorkflowRun: ...
    async def list_run_jobs(self, repo: Repo, run_id: int) -> list[WorkflowJob]: ...

    # a GitHub Actions job's log: its last ``max_bytes``; None when GitHub keeps none
    async def job_log_tail(self, repo: Repo, job_id: int, *, max_bytes: int) -> str | None: ...
