"""The markdown magi posts for a run: the three PR comments, the PR body, the tracking comment.

The comments come from ``magi.report.markdown`` (the one report model the terminal uses);
this module adds the review loop's findings as its sections, with file:line links to the
PR's head. The tracking comment's renderer is ``magi.report.tracking`` (the App renders
the workflow's jobs into the same comment), re-exported here. Nothing here is gated yet:
``magi.action.publish_job.publish`` passes all of it through
``magi.core.threads.posting.gate`` before it leaves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from magi.model.run import Question, Run
from magi.report import Section, build
from magi.report import comments as report_comments
from magi.report.gfm import inline, quote
from magi.report.review_md import review_sections as report_review_sections
from magi.report.tracking import Links, ending, tracking

__all__ = [
    "Comments",
    "Links",
    "comments",
    "ending",
    "gate_of",
    "pr_body",
    "question",
    "review_of",
    "tracking",
]


def review_of(run: Run) -> Any:
    """The review loop's record (``Run.review``, from the review loop's schema), or None."""
    return getattr(run, "review", None)


def gate_of(run: Run) -> Any:
    """The gate's record (``Run.gate``), or None."""
    return getattr(run, "gate", None)


@dataclass(frozen=True)
class Comments:
    tally: str
    transcripts: str
    review: str


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
        quote(run.task.cleaned),  # an issue's text: it closes no <details> of magi's
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


def question(run: Run, q: Question) -> str:
    """An agent's question the run parked on, put to the issue's writers. Its words are the
    agent's (gated like every text), attributed to the seat as ``implement · B``."""
    from magi.core.person.asking import where

    last = q.turns[-1]
    lines = [
        "### magi asks",
        "",
        f"Run `{run.id}` is waiting: {where(q.node, q.label, q.seat)} asked (question `{q.id}`):",
        "",
        quote(last.summary),
        "",
    ]
    if last.choices:
        lines += [f"{i}. {inline(c)}" for i, c in enumerate(last.choices, start=1)] + [""]
    choices = "one of the choices (its text or number) or your own words"
    pick = choices if last.choices else "your words"
    lines += [
        f"A person with write access answers with `/magi answer <{pick}>` on a line of its "
        f"own (`/magi answer {q.id} ...` while several questions wait). Only that seat "
        "carries on; every other seat's work is kept.",
    ]
    return "\n".join(lines) + "\n"
