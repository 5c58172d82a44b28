"""The markdown magi posts for a run: the three PR comments, the PR body, the tracking comment.

The comments come from ``magi.report.markdown`` (the one report model the terminal uses);
this module adds the review loop's findings as its sections, with file:line links to the
PR's head. Nothing here is gated yet: ``magi.action.publish`` passes all of it through
``magi.core.posting.gate`` before it leaves.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from magi.report import Section, build, node_seconds
from magi.report import comments as report_comments
from magi.report.review_md import review_sections as report_review_sections
from magi.state.model import Run, RunStatus

__all__ = ["Comments", "Links", "comments", "ending", "gate_of", "pr_body", "review_of", "tracking"]


def review_of(run: Run) -> Any:
    """The review loop's record (``Run.review``, from the review loop's schema), or None."""
    return getattr(run, "review", None)


def gate_of(run: Run) -> Any:
    """The gate's record (``Run.gate``), or None."""
    return getattr(run, "gate", None)


@dataclass(frozen=True)
class Links:
    """Where things are on GitHub, for the texts that point at them."""

    repo_url: str
    job_url: str | None = None
    pr_url: str | None = None
    head: str | None = None  # the PR head, for file:line links
    branches: Sequence[str] = ()
    record_ref: str | None = None


@dataclass(frozen=True)
class Comments:
    tally: str
    transcripts: str
    review: str


def ending(run: Run) -> str:
    """One sentence on how the run ended, and what to do about it."""
    reason = run.reason or ""
    s = run.status
    if s is RunStatus.READY:
        return f"Candidate {run.tally.winner if run.tally else '?'} won; review and gate are green."
    if s is RunStatus.VERIFIED_NOOP:
        return f"Verified no-op: every candidate showed nothing is needed. {reason}".strip()
    if s is RunStatus.STALLED:
        return f"Stalled on provider quota: {reason} Comment `/magi retry` once limits reset."
    if s is RunStatus.HELD:
        return f"Held by a budget cap: {reason} Raise `[budget]` and `/magi retry`."
    if s is RunStatus.BLOCKED:
        return f"Blocked: {reason} The pull request stays a draft until this is resolved."
    if s is RunStatus.FAILED:
        return f"Failed: {reason} See the job log; `/magi retry` spends another attempt."
    return f"{s.value}: {reason}".strip()


def review_sections(run: Run, links: Links) -> list[Section]:
    """The report's review sections, with file:line linked to the PR's head."""
    return report_review_sections(run, links.repo_url, links.head)


_OWN_MARKER = re.compile(r"^<!-- magi:[a-z-]+ [^\n]*?-->\n", re.M)


def comments(run: Run, links: Links) -> Comments:
    """The three PR comments, rendered by the report (``magi show --markdown``)."""
    tally, transcripts, review = report_comments(build(run), review_sections(run, links))
    # The report marks its comments itself; publish adds its own marker after the posting
    # gate (which escapes any marker inside gated text), so the report's goes here.
    return Comments(*(_OWN_MARKER.sub("", c.body, count=1) for c in (tally, transcripts, review)))


def pr_body(run: Run, issue: int, links: Links) -> str:
    """The PR's body: the task, ``Closes #n``, the outcome, links."""
    lines = [
        f"Closes #{issue}",
        "",
        f"**Outcome**: {ending(run)}",
        "",
        "<details><summary>The task</summary>",
        "",
        run.task.cleaned,
        "",
        "</details>",
        "",
    ]
    if links.branches:
        lines.append("Candidate branches: " + ", ".join(f"`{b}`" for b in links.branches))
    if links.record_ref:
        lines.append(f"Run record: `{links.record_ref}`")
    if links.job_url:
        lines.append(f"Job log: {links.job_url}")
    return "\n".join(lines) + "\n"


def tracking(run: Run | None, links: Links, note: str = "") -> str:
    """The issue's tracking comment: the node checklist with times, then the links."""
    lines = ["### magi", ""]
    if run is not None:
        lines.append(f"Run `{run.id}`: **{run.status.value}**")
        lines.append("")
        seconds = node_seconds(run)
        for node, secs in seconds.items():
            lines.append(f"- [x] {node} ({secs:.0f}s)" if secs is not None else f"- [ ] {node}")
        total = sum(s for s in seconds.values() if s is not None)
        lines += ["", f"Total: {total:.0f}s", "", ending(run)]
    if note:
        lines += ["", note]
    lines.append("")
    if links.pr_url:
        lines.append(f"Pull request: {links.pr_url}")
    if links.branches:
        lines.append("Branches: " + ", ".join(f"`{b}`" for b in links.branches))
    if links.record_ref:
        lines.append(f"Record: `{links.record_ref}`")
    if links.job_url:
        lines.append(f"Live log: {links.job_url}")
    return "\n".join(lines) + "\n"
