"""The issue's tracking comment: the run's checklist (publish) and its workflow jobs (the App).

One comment, two writers. Each publish renders the run's part from the record (``tracking``:
the node checklist with times, the total, the ending, links). The App, on each
``workflow_job`` event, renders the jobs part (``jobs_block``: each job queued, in progress
or done with its conclusion, and a link to its log) between two markers of its own, and
splices it into whatever the comment says (``with_jobs``); publish carries the jobs part
over when it rewrites the rest (``carry_jobs``). The block is added after the posting gate,
which escapes any ``<!-- magi:`` inside gated text, so no gated text can fake or end it.
A block of an older workflow run never replaces a newer one's (run ids only grow).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from magi.core.threads.markers import Seal
from magi.core.threads.pin import EDITED
from magi.model.run import Run, RunStatus
from magi.report.gfm import inline
from magi.report.json import node_seconds

__all__ = [
    "JobLine",
    "Links",
    "carry_jobs",
    "ending",
    "jobs_block",
    "jobs_of",
    "tracking",
    "with_jobs",
]


@dataclass(frozen=True)
class Links:
    """Where things are on GitHub, for the texts that point at them."""

    repo_url: str
    job_url: str | None = None
    pr_url: str | None = None
    head: str | None = None  # the PR head, for file:line links
    branches: Sequence[str] = ()
    record_ref: str | None = None


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
    if s is RunStatus.PARKED:
        return f"Parked: {reason.rstrip('.')}. No attempt was spent; `/magi retry` carries it on."
    if s is RunStatus.ASKING:
        return (
            "Waiting on a question an agent asked (its own comment on this issue): a writer's "
            "`/magi answer` carries that seat on; no attempt was spent."
        )
    if s is RunStatus.HANDED_OFF:
        return (
            f"Handed off: {reason}. The workflow carries it on there (a seat's agent is "
            "logged in on another runner); no attempt was spent."
        )
    if s is RunStatus.BLOCKED:
        # Where GitHub has no drafts (a private repository on Free or Pro) the PR is open
        # and says it is not yet reviewed; "stays a draft" would be untrue there.
        return (
            f"Blocked: {reason} The pull request is not to be merged until this is resolved "
            "(a draft, or, where GitHub has no drafts, held by the red `magi` check)."
        )
    if s is RunStatus.FAILED:
        return f"Failed: {reason} See the job log; `/magi retry` spends another attempt."
    return f"{s.value}: {reason}".strip()


def tracking(run: Run | None, links: Links, note: str = "") -> str:
    """The run's part: the node checklist with times, then the links."""
    lines = ["### magi", ""]
    if run is not None:
        lines.append(f"Run `{run.id}`: **{run.status.value}**")
        lines.append("")
        seconds = node_seconds(run)
        for node, secs in seconds.items():
            lines.append(f"- [x] {node} ({secs:.0f}s)" if secs is not None else f"- [ ] {node}")
        total = sum(s for s in seconds.values() if s is not None)
        lines += ["", f"Total: {total:.0f}s", "", ending(run)]
        if any(e.node == "run" and EDITED in e.message for e in run.events):
            lines += ["", EDITED]  # the run works on the text the label pinned
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


# -- the jobs part ------------------------------------------------------------------------


@dataclass(frozen=True)
class JobLine:
    """One job of the workflow run, as GitHub reports it."""

    name: str
    status: str  # queued | waiting | in_progress | completed | ...
    conclusion: str | None = None
    url: str = ""
    started_at: datetime | None = None
    completed_at: datetime | None = None


# The jobs part's two delimiters are sealed markers like every other of magi's (the last
# door before GitHub escapes any that is not), so only magi's own block is ever replaced.
_BLOCK = re.compile(
    r"<!-- magi:jobs run=(\d+) mac=[0-9a-f]+ -->\n.*?<!-- magi:jobs-end mac=[0-9a-f]+ -->\n?",
    re.S,
)


def _took(job: JobLine) -> str:
    if job.started_at is None or job.completed_at is None:
        return ""
    secs = max(0, round((job.completed_at - job.started_at).total_seconds()))
    return f", {secs // 60}m {secs % 60:02d}s" if secs >= 60 else f", {secs}s"


def _job(job: JobLine) -> str:
    name = inline(job.name, 120)
    if job.status == "completed":
        box, state = "x", f"{inline(job.conclusion or 'done', 40)}{_took(job)}"
        log = f" · [log]({job.url})" if job.url else ""
    else:
        box, state = " ", inline(job.status.replace("_", " "), 40)
        log = f" · [live log]({job.url})" if job.url and job.status == "in_progress" else ""
    return f"- [{box}] {name}: {state}{log}"


def jobs_block(run_id: int, run_url: str, jobs: Sequence[JobLine], seal: Seal) -> str:
    """The jobs part for workflow run ``run_id``, between the App's two sealed markers."""
    head = f"Workflow run [{run_id}]({run_url})" if run_url else f"Workflow run {run_id}"
    lines = [seal.marker("jobs", run=run_id), f"**Jobs** · {head}", ""]
    lines += [_job(j) for j in jobs] or ["- [ ] (no job started yet)"]
    return "\n".join([*lines, seal.marker("jobs-end")]) + "\n"


def jobs_of(body: str) -> str:
    """The jobs part of a tracking comment ("" when it has none)."""
    found = _BLOCK.search(body or "")
    return found[0] if found else ""


def with_jobs(body: str, block: str) -> str:
    """``body`` with its jobs part replaced by ``block`` (or added before magi's marker).

    A block for an older workflow run than the one ``body`` shows changes nothing.
    """
    if not block:
        return body
    new = _BLOCK.match(block)
    old = _BLOCK.search(body)
    if old is not None:
        if new is not None and int(new[1]) < int(old[1]):
            return body
        return body[: old.start()] + block + body[old.end() :]
    # The block goes just before magi's last marker line, which stays the comment's last.
    marker = body.rfind("\n<!-- magi:")
    if marker < 0:
        return body.rstrip("\n") + "\n\n" + block
    return body[: marker + 1] + block + "\n" + body[marker + 1 :]


def carry_jobs(old: str, new: str) -> str:
    """``new`` (a publish's rewrite) keeping the jobs part ``old`` had."""
    return with_jobs(new, jobs_of(old))
