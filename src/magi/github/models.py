"""magi's own view of GitHub's JSON: small pydantic models parsed defensively at the edge.

githubkit's generated models are strict and reject real payloads (a label without
``archived_by``, an installation without ``app_slug``), so the adapter reads ``.json()`` and
parses it here instead. Each model names only the fields magi reads; everything else GitHub
sends is ignored (``extra="ignore"``: GitHub adds fields all the time, and an unknown field is
not a reason to drop a delivery). Missing optional fields default; a missing required one is
a ``ValidationError`` the adapter turns into a ``GitHubError``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Repo(_Model):
    """``owner/name``: which repository a call is about."""

    owner: str
    name: str

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    @classmethod
    def parse(cls, full_name: str) -> Repo:
        owner, _, name = full_name.partition("/")
        if not owner or not name:
            raise ValueError(f"{full_name!r} is not owner/name")
        return cls(owner=owner, name=name)


class User(_Model):
    login: str
    id: int = 0
    type: str = "User"


class Comment(_Model):
    id: int
    body: str = ""
    user: User | None = None
    html_url: str = ""
    created_at: datetime | None = None
    updated_at: datetime | None = None  # later than created_at once the comment was edited


class Label(_Model):
    name: str


class PullReview(_Model):
    """A submitted review on a pull request: who and its state (APPROVED, CHANGES_REQUESTED...)."""

    user: User | None = None
    state: str = ""


class Issue(_Model):
    number: int
    title: str = ""
    body: str | None = None
    state: str = "open"
    user: User | None = None
    labels: list[Label] = Field(default_factory=list)
    html_url: str = ""
    pull_request: dict[str, Any] | None = None
    updated_at: datetime | None = None  # GitHub's clock: a label event's issue has it


class Permission(_Model):
    """``GET /repos/{o}/{r}/collaborators/{u}/permission``: ``permission`` is the folded level."""

    permission: str = "none"
    role_name: str | None = None


class Content(_Model):
    """A file read through the contents API, already decoded."""

    path: str
    sha: str
    text: str


class GitRef(_Model):
    ref: str
    sha: str


class Dispatch(_Model):
    """What a workflow dispatch answered (API 2026-03-10 returns the run's id)."""

    workflow_run_id: int | None = None
    html_url: str | None = None


class WorkflowRun(_Model):
    id: int
    status: str | None = None
    conclusion: str | None = None
    html_url: str = ""
    event: str = ""
    head_sha: str = ""
    display_title: str = ""  # the workflow's `run-name:` (magi's says which issue or PR)
    path: str = ""  # the workflow file, ".github/workflows/magi.yml"
    # Where the commit it ran lives: a fork PR's run of a workflow is the fork's
    head_repository: BranchRepo | None = None


class JobStep(_Model):
    """One step of a workflow job, as the jobs API says it (its log is the job's)."""

    name: str = ""
    status: str = "queued"
    conclusion: str | None = None


class WorkflowJob(_Model):
    """One job of a workflow run (``GET .../actions/runs/{run_id}/jobs``)."""

    id: int
    name: str = ""
    status: str = "queued"  # queued | in_progress | completed | waiting | ...
    conclusion: str | None = None
    html_url: str = ""
    started_at: datetime | None = None
    completed_at: datetime | None = None
    runner_name: str | None = None  # null: no runner took the job
    steps: list[JobStep] = Field(default_factory=list)


class BranchRepo(_Model):
    """The repository a PR's head or base lives in (a fork's head is in another one)."""

    id: int | None = None
    full_name: str = ""


class Branch(_Model):
    ref: str
    sha: str
    label: str | None = None
    repo: BranchRepo | None = None  # null for a head whose fork was deleted


class PullRequest(_Model):
    number: int
    state: str = "open"
    title: str = ""
    body: str | None = None
    draft: bool = False
    merged: bool = False
    # No merge_commit_sha: API 2026-03-10 removed it (GitHubPort.merge_commit reads it).
    mergeable: bool | None = None
    mergeable_state: str | None = None  # clean | behind | dirty | blocked | unstable | unknown
    head: Branch
    base: Branch
    html_url: str = ""
    created_at: datetime | None = None
    updated_at: datetime | None = None
    user: User | None = None
    node_id: str = ""  # GraphQL's id: drafts change only through GraphQL


class MergeResult(_Model):
    merged: bool = False
    sha: str | None = None
    message: str = ""


class CheckApp(_Model):
    """The GitHub App that made a check run (``github-actions`` for an Actions job)."""

    slug: str = ""


class CheckRun(_Model):
    id: int = 0
    name: str
    status: str = "queued"
    conclusion: str | None = None
    head_sha: str = ""
    html_url: str | None = None
    details_url: str | None = None
    app: CheckApp | None = None


class StatusContext(_Model):
    context: str
    state: str


class CombinedStatus(_Model):
    state: str = "pending"
    total_count: int = 0
    statuses: list[StatusContext] = Field(default_factory=list)


class Commit(_Model):
    """A commit's sha and when it was committed (the gate's "pushed" clock)."""

    sha: str
    committed_at: datetime | None = None

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> Commit:
        date = ((data.get("commit") or {}).get("committer") or {}).get("date")
        return cls(sha=data["sha"], committed_at=date)


class Activity(_Model):
    """One change GitHub recorded to a branch: ``timestamp`` is when GitHub took the push.

    That is GitHub's own clock, where a commit's committer date is whatever whoever made the
    commit wrote: the merge gate reads this one. The schema names the fields ``timestamp``
    and ``activity_type``; the example GitHub publishes for the operation still uses the
    older ``pushed_at`` and ``push_type`` (``normal``/``force``), so both are read.
    """

    ref: str
    before: str = ""
    after: str
    timestamp: datetime
    activity_type: str

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> Activity:
        kind = data.get("activity_type")
        if kind is None:
            old = data.get("push_type")
            kind = {"normal": "push", "force": "force_push"}.get(str(old), old)
        return cls(
            ref=data["ref"],
            before=data.get("before") or "",
            after=data["after"],
            timestamp=data.get("timestamp") or data["pushed_at"],
            activity_type=kind,
        )


class TreeEntry(_Model):
    """One entry of a git tree (``mode`` 100644 blob, 040000 tree, ...)."""

    path: str
    mode: str
    type: str
    sha: str
    size: int | None = None


class GitTree(_Model):
    """``GET /repos/{o}/{r}/git/trees/{sha}``: one level, unless asked recursively."""

    sha: str
    tree: list[TreeEntry] = Field(default_factory=list)
    truncated: bool = False


class GitCommit(_Model):
    """A git commit object (the Git Data API's, not the repository commit's): its tree and
    parents by sha."""

    sha: str
    message: str = ""
    tree: str
    parents: list[str] = Field(default_factory=list)
    committed_at: datetime | None = None

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> GitCommit:
        return cls(
            sha=data["sha"],
            message=data.get("message") or "",
            tree=data["tree"]["sha"],
            parents=[p["sha"] for p in data.get("parents") or []],
            committed_at=(data.get("committer") or {}).get("date"),
        )


class Blob(_Model):
    """A git blob, its content already decoded from the API's base64."""

    sha: str
    content: bytes


class BranchRule(_Model):
    """One rule in force on a branch (``GET /repos/{o}/{r}/rules/branches/{branch}``):
    ``pull_request`` (``required_approving_review_count``), ``required_status_checks``
    (``strict_required_status_checks_policy``), ``merge_queue``, ...
    https://docs.github.com/en/rest/repos/rules#get-rules-for-a-branch"""

    type: str
    parameters: dict[str, Any] = Field(default_factory=dict)
