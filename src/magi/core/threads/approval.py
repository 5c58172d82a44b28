"""The merge gate's decisions: is this comment an approval, and may this PR merge now.

An approval is a new comment whose whole body is the word ``merge`` (case and surrounding
whitespace ignored), by a person with write, maintain or admin permission, not a bot and
not the App. It is pinned to the PR's head SHA when it was made. The merge decision then
needs that SHA still at the head (or a change with the same patch: the caller passes
``same_change``, see issue 11's ``git patch-id --stable`` rule), an open, non-draft,
mergeable PR, every check green, and at least one check: "no checks yet" within three
minutes of the push is waiting, after that it is unknown, and unknown never merges.
Silence is a hold: nothing here ever decides to merge without an approval.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from magi.core.threads.posting import code

GREEN = frozenset({"success", "neutral", "skipped"})
WRITERS = frozenset({"admin", "write"})
CHECKS_GRACE = timedelta(minutes=3)
# The collaborator permission API folds roles: maintain -> write, triage -> read.
# https://docs.github.com/en/rest/collaborators/collaborators#get-repository-permissions-for-a-user
_FOLD = {"maintain": "write", "triage": "read"}


def permission_level(permission: str | None) -> str:
    """The permission as ``admin | write | read | none`` (maintain -> write, triage -> read)."""
    value = (permission or "none").strip().lower()
    value = _FOLD.get(value, value)
    return value if value in {"admin", "write", "read"} else "none"


def may_write(permission: str | None) -> bool:
    """Whether this permission may approve, start runs and give commands."""
    return permission_level(permission) in WRITERS


def is_merge_word(body: str) -> bool:
    """Whether the whole comment is the single word ``merge`` (case, outer space ignored)."""
    return body.strip().lower() == "merge"


def is_bot(login: str, user_type: str, app_login: str | None = None) -> bool:
    """Whether a sender is a bot or this App (which must never act on its own comments)."""
    return (
        user_type.lower() == "bot"
        or login.lower().endswith("[bot]")
        or (app_login is not None and login.lower() == app_login.lower())
    )


def bot_name(login: str) -> str:
    """A bot's login as config names it: lower case, without GitHub's ``[bot]`` suffix."""
    return login.strip().lower().removesuffix("[bot]")


def reviewer_counts(
    login: str, user_type: str, permission: str | None, trusted_bots: Iterable[str]
) -> bool:
    """Whether a review (or line comment) by ``login`` may spend agents on a fix round.

    A person counts with write access (the same bar as ``merge`` and every command); a bot
    counts only when ``[github] trusted_bots`` names it, whatever permission its App has:
    a review is agent input, and any App installed with pull-request write could post one."""
    if is_bot(login, user_type):
        return bot_name(login) in {bot_name(b) for b in trusted_bots}
    return may_write(permission)


@dataclass(frozen=True)
class CommentFacts:
    """What the gate needs to know about one comment."""

    body: str
    login: str
    user_type: str
    action: str
    permission: str | None = None
    user_id: int = 0  # GitHub's id of the author (a login can be renamed, an id cannot)


class Approval(enum.Enum):
    """How a comment reads to the gate."""

    NOT_ONE = "not-one"  # not the word merge, or a bot: silence
    EDITED = "edited"
    NOT_A_WRITER = "not-a-writer"
    APPROVED = "approved"


def read_approval(c: CommentFacts, app_login: str | None = None) -> Approval:
    """Classify a comment; only ``APPROVED`` counts, ``NOT_ONE`` gets no reply."""
    if not is_merge_word(c.body) or is_bot(c.login, c.user_type, app_login):
        return Approval.NOT_ONE
    if c.action != "created":
        return Approval.EDITED
    if not may_write(c.permission):
        return Approval.NOT_A_WRITER
    return Approval.APPROVED


def approval_refusal(kind: Approval, login: str, permission: str | None) -> str:
    """Why a ``merge`` comment is not an approval, in words for the reply."""
    if kind is Approval.EDITED:
        return "an edited comment is not an approval: write `merge` as a new comment."
    level = permission_level(permission)
    return (
        f"@{login} has `{level}` permission; only people with write, maintain or admin "
        "permission on this repository may approve a merge."
    )


@dataclass(frozen=True)
class Check:
    """One check run or commit status on the head, as the gate sees it."""

    name: str
    status: str  # queued | in_progress | completed (statuses: pending -> in_progress)
    conclusion: str | None = None

    @property
    def done(self) -> bool:
        return self.status == "completed"

    @property
    def green(self) -> bool:
        return self.done and (self.conclusion or "") in GREEN


def status_check(context: str, state: str) -> Check:
    """A commit status as a check: ``pending`` is running, anything else is its conclusion."""
    if state == "pending":
        return Check(context, "in_progress")
    return Check(context, "completed", state)


@dataclass(frozen=True)
class PullFacts:
    """The PR as the gate needs it."""

    number: int
    head_sha: str
    state: str = "open"
    merged: bool = False
    draft: bool = False
    mergeable: bool | None = True
    pushed_at: datetime | None = None


class Outcome(enum.Enum):
    """What to do now: merge, wait for the next event, or refuse until a person acts."""

    MERGE = "merge"
    WAIT = "wait"
    REFUSE = "refuse"


@dataclass(frozen=True)
class Decision:
    """The gate's answer, with a stable reason code (for reply-once markers) and the words."""

    outcome: Outcome
    reason: str
    message: str
    names: tuple[str, ...] = field(default=())


def _same(a: str, b: str) -> bool:
    return a == b


def _names(checks: Sequence[Check]) -> str:
    return ", ".join(code(c.name) for c in checks)


def decide(
    pull: PullFacts,
    approved_sha: str,
    checks: Sequence[Check],
    now: datetime,
    *,
    required: Sequence[str] = (),
    same_change: Callable[[str, str], bool] = _same,
) -> Decision:
    """Whether the PR approved at ``approved_sha`` may merge now, and exactly why not."""
    if pull.merged or pull.state != "open":
        what = "merged" if pull.merged else "closed"
        return Decision(Outcome.REFUSE, "not-open", f"the pull request is already {what}.")
    if pull.head_sha != approved_sha and not same_change(approved_sha, pull.head_sha):
        return Decision(
            Outcome.REFUSE,
            "head-moved",
            f"the head moved after the approval (approved `{approved_sha[:12]}`, head is now "
            f"`{pull.head_sha[:12]}`): new commits need a new `merge`.",
        )
    if pull.draft:
        return Decision(
            Outcome.WAIT,
            "draft",
            "the pull request is a draft: magi keeps it one until the review loop and the "
            "gate pass. The approval stands and is used once it is ready.",
        )
    if pull.mergeable is False:
        return Decision(
            Outcome.REFUSE, "not-mergeable", "GitHub says the pull request is not mergeable."
        )
    counted = [c for c in checks if not required or c.name in required]
    missing = [n for n in required if n not in {c.name for c in checks}]
    young = pull.pushed_at is not None and now - pull.pushed_at < CHECKS_GRACE
    red = [c for c in counted if c.done and not c.green]
    if red:
        return Decision(
            Outcome.REFUSE,
            "checks-red",
            f"these checks are not green: {_names(red)}.",
            tuple(c.name for c in red),
        )
    running = [c for c in counted if not c.done]
    if running:
        return Decision(
            Outcome.WAIT,
            "checks-running",
            f"these checks are still running: {_names(running)}. magi merges when they pass.",
            tuple(c.name for c in running),
        )
    if missing or not counted:
        what = (
            f"the required checks {', '.join(code(n) for n in missing)} have not reported"
            if missing
            else "there are no checks on the head"
        )
        if young:
            return Decision(
                Outcome.WAIT,
                "checks-waiting",
                f"{what} yet; checks can take minutes to appear after a push.",
                tuple(missing),
            )
        return Decision(
            Outcome.REFUSE,
            "checks-unknown",
            f"{what}, three minutes after the push: with no signal at all magi never merges.",
            tuple(missing),
        )
    if pull.mergeable is None:
        return Decision(
            Outcome.WAIT,
            "mergeable-unknown",
            "GitHub is still computing whether it can merge (it sends no event when done); "
            "magi reads it again on the next event about this pull request (a check "
            "finishing, a review, a push), or when a writer says `merge` again.",
        )
    return Decision(Outcome.MERGE, "ok", "every check is green.")
