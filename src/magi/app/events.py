"""Deliveries as magi reads them: the payload models, and the small router each behaviour owns.

Payload models name only the fields magi reads and ignore the rest (GitHub adds fields all
the time; githubkit's strict models reject real deliveries). A signed body that does not fit
the model of its route is a 400 with the reason, decided before anything is queued, so a
wrong-shape body never reaches a handler or GitHub. Each behaviour module (``labeled``,
``merge``, ``commands``) has its own ``Router``; ``create_app`` composes them, like bedevere.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from magi.github.models import Comment, Issue, Label, PullRequest, Repo, User

if TYPE_CHECKING:
    from magi.app.context import AppContext

# Events from bots are ignored (magi would loop on its own comments) except these, which
# are how the merge gate hears that CI finished, and how landing hears bots' reviews and
# pushes (magi's own rebase among them: it must re-pin or void an approval).
CHECK_EVENTS = frozenset(
    {
        "check_suite",
        "check_run",
        "status",
        "workflow_run",
        "pull_request",
        "pull_request_review",
        "pull_request_review_comment",
        "workflow_job",  # the App dispatches magi's runs: their jobs' sender is the App
        "push",  # the base moved, by magi's own squash-merge among others
        "merge_group",  # a merge queue asks for checks on its group: magi's own answers
    }
)


class _Payload(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class RepoPayload(_Payload):
    id: int | None = None
    full_name: str = Field(pattern=r"^[^/\s]+/[^/\s]+$")
    default_branch: str = "main"
    html_url: str = ""
    private: bool | None = None  # None: the payload did not say

    @property
    def ref(self) -> Repo:
        return Repo.parse(self.full_name)


class InstallationPayload(_Payload):
    id: int


class Base(_Payload):
    action: str | None = None
    sender: User
    repository: RepoPayload
    installation: InstallationPayload | None = None


class IssuesEvent(Base):
    issue: Issue
    label: Label | None = None


class IssueCommentEvent(Base):
    issue: Issue
    comment: Comment


class RepoId(_Payload):
    id: int | None = None


class PullBranch(_Payload):
    ref: str | None = None
    repo: RepoId | None = None


class PullRef(_Payload):
    number: int
    head: PullBranch | None = None  # what ``magi.core.threads.relevance`` reads
    base: PullBranch | None = None


class SuiteRef(_Payload):
    head_branch: str | None = None


class CheckSuite(_Payload):
    head_sha: str
    head_branch: str | None = None
    pull_requests: list[PullRef] = Field(default_factory=list)
    check_suite: SuiteRef | None = None  # a check run's suite (its branch)


class CheckSuiteEvent(Base):
    check_suite: CheckSuite


class CheckRunEvent(Base):
    check_run: CheckSuite


class StatusBranch(_Payload):
    name: str


class StatusEvent(Base):
    sha: str
    state: str = ""
    branches: list[StatusBranch] | None = None  # at most 10 of the branches holding ``sha``


class WorkflowRunBody(_Payload):
    head_sha: str
    head_branch: str | None = None
    head_repository: RepoId | None = None
    pull_requests: list[PullRef] = Field(default_factory=list)


class WorkflowRunEvent(Base):
    workflow_run: WorkflowRunBody


class PullRequestEvent(Base):
    pull_request: PullRequest


class DequeuedEvent(PullRequestEvent):
    """``pull_request`` ``dequeued``: taken out of a merge queue, and GitHub's reason.
    https://docs.github.com/en/webhooks/webhook-events-and-payloads#pull_request"""

    reason: str


class PushEvent(Base):
    """A push: only the branch and its new head are read (the commits list can be big)."""

    ref: str
    after: str = ""


class MergeGroup(_Payload):
    """A merge queue's group: its commit and branch (`gh-readonly-queue/<base>/pr-<n>-<head>`)."""

    head_sha: str = Field(pattern=r"^[0-9a-f]{40}$")
    head_ref: str
    base_ref: str = ""


class MergeGroupEvent(Base):
    merge_group: MergeGroup


class ReviewBody(_Payload):
    state: str = ""
    body: str | None = None
    user: User | None = None


class ReviewEvent(Base):
    pull_request: PullRequest
    review: ReviewBody


class ReviewCommentEvent(Base):
    pull_request: PullRequest
    comment: Comment


P = TypeVar("P", bound=Base)


@dataclass(frozen=True)
class Delivery(Generic[P]):
    """One verified delivery on its way to a handler."""

    id: str
    event: str
    payload: P
    # GitHub sent it again because this receiver's start-up asked (``magi.app.redeliver``):
    # its payload tells what was true when it was first sent, not now.
    replayed: bool = False

    @property
    def repo(self) -> Repo:
        return self.payload.repository.ref

    @property
    def installation(self) -> int | None:
        inst = self.payload.installation
        return inst.id if inst else None


Handler = Callable[["AppContext", Delivery[Any]], Awaitable[str]]


@dataclass(frozen=True)
class Route:
    """``wants``: a cheap, pure look at the payload; False means no work is queued for it."""

    event: str
    action: str | None
    model: type[Base]
    handler: Handler
    wants: Callable[[Any], bool] | None = None


@dataclass
class Router:
    """The routes of one behaviour: ``(event, action) -> (payload model, handler)``."""

    routes: list[Route] = field(default_factory=list)

    def on(
        self,
        event: str,
        action: str | None,
        model: type[Base],
        wants: Callable[[Any], bool] | None = None,
    ) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            self.routes.append(Route(event, action, model, handler, wants))
            return handler

        return register

    def match(self, event: str, action: str | None, *, any_action: bool = False) -> list[Route]:
        """The routes for ``event`` and ``action`` (a route with no action takes any)."""
        return [
            r
            for r in self.routes
            if r.event == event and (any_action or r.action in (None, action))
        ]

    @staticmethod
    def compose(*routers: Router) -> Router:
        return Router([r for router in routers for r in router.routes])

    def events(self) -> set[str]:
        return {r.event for r in self.routes}
