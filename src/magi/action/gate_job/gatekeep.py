"""Without the App: the claim and the merge gate, run inside the workflow from the event file.

The same code the App runs: the claim is ``magi.github.state.claim_ref`` created at the
default branch's head (GitHub creates a ref atomically, so of two runs for one issue
exactly one competes); the merge gate is ``magi.github.gate`` (``on_comment`` for a
``merge`` comment on a magi PR, ``evaluate`` when a workflow run or a commit status may have
turned the checks green), with ``magi.core.threads.approval``'s decisions, the squash merge with the
SHA precondition and the clean-up. The token is the App installation token the job minted
(``MAGI_GITHUB_TOKEN``); whose comments are magi's is its App's login (``MAGI_APP_SLUG``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from magi.core.threads.approval import CommentFacts, is_merge_word
from magi.core.threads.markers import Seal
from magi.errors import ActionError
from magi.github import gate
from magi.github.models import Repo
from magi.github.pin import pin_commit
from magi.github.port import GitHubPort
from magi.github.state import claim_ref

__all__ = ["MergeEvent", "claim", "merge_event", "run_gate"]


# The workflow's claim commit (not the App's ``magi: claim``, whose age the App reads).
WORKFLOW_CLAIM = "magi: workflow claim"


async def claim(
    port: GitHubPort,
    repo: Repo,
    issue: int,
    default_branch: str,
    workflow_run: str = "",
    *,
    text: tuple[str, str],
    seal: Seal,
) -> bool:
    """Claim issue ``issue`` for one competition; False when another run holds it.

    The claim is a commit of its own (the head its parent) whose message names the
    workflow run: GitHub's "Re-run all jobs" runs this job again in the same workflow run,
    which finds its own claim and goes on, where another run is refused. Its tree is
    ``text`` (title, body) as the label event carried it, its digest sealed
    (``magi.core.threads.pin``): the run works on that."""
    head = await port.get_ref(repo, f"heads/{default_branch}")
    if head is None:
        raise ActionError(f"the default branch `{default_branch}` has no head to claim at")
    message = f"{WORKFLOW_CLAIM} issue #{issue}, workflow run {workflow_run or '?'}"
    mine = await pin_commit(
        port, repo, issue=issue, title=text[0], body=text[1], parent=head.sha,
        message=message, seal=seal,
    )  # fmt: skip
    ref = claim_ref(issue)
    if await port.create_ref(repo, ref, mine):
        return True
    held = await port.get_ref(repo, ref.removeprefix("refs/"))
    if held is None:  # released meanwhile: creating is atomic again
        return await port.create_ref(repo, ref, mine)
    if not workflow_run:
        return False
    found = (await port.get_git_commit(repo, held.sha)).message
    return found.split("\n", 1)[0] == message


@dataclass(frozen=True)
class MergeEvent:
    """What an event asks of the gate: a comment to read, or PRs to decide again."""

    default_branch: str
    pr: int | None = None  # the comment's PR
    comment: CommentFacts | None = None
    comment_id: int = 0
    created_at: datetime | None = None
    prs: tuple[int, ...] = ()  # wake: these PRs
    sha: str = ""  # wake: the open PRs with this head (when ``prs`` is empty)


def _dict(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ActionError(f"the event's {where} is not what GitHub sends")
    return value


def merge_event(event: str, payload: Mapping[str, Any]) -> MergeEvent | None:
    """The gate's work for one event, or None when the event is not for it (pure)."""
    branch = str(_dict(payload.get("repository"), "repository").get("default_branch") or "main")
    if event == "issue_comment":
        issue = _dict(payload.get("issue"), "issue")
        c = _dict(payload.get("comment"), "comment")
        if not issue.get("pull_request") or not is_merge_word(str(c.get("body") or "")):
            return None
        user = _dict(c.get("user"), "comment.user")
        created = c.get("created_at")
        return MergeEvent(
            default_branch=branch,
            pr=int(issue["number"]),
            comment=CommentFacts(
                str(c.get("body") or ""),
                str(user.get("login", "")),
                str(user.get("type", "User")),
                str(payload.get("action") or ""),
                None,
                int(user.get("id") or 0),
            ),
            comment_id=int(c["id"]),
            created_at=datetime.fromisoformat(str(created)) if created else None,
        )
    if event == "workflow_run":
        run = _dict(payload.get("workflow_run"), "workflow_run")
        prs = tuple(int(_dict(p, "pull request")["number"]) for p in run.get("pull_requests") or [])
        return MergeEvent(default_branch=branch, prs=prs, sha=str(run.get("head_sha") or ""))
    if event == "status":
        return MergeEvent(default_branch=branch, sha=str(payload.get("sha") or ""))
    return None


async def run_gate(g: gate.Gate, port: GitHubPort, repo: Repo, e: MergeEvent) -> str:
    """Run the App's merge gate for one event; the outcome(s), comma-separated."""
    if e.comment is not None and e.pr is not None:
        return await gate.on_comment(
            g, port, repo, e.pr, e.comment, e.comment_id, e.created_at, e.default_branch
        )
    if not e.prs and not e.sha:
        return "no-pr"
    return await gate.wake(g, port, repo, e.default_branch, e.sha, list(e.prs))
