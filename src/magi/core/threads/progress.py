"""Which issue or PR a workflow run of magi's is for: its ``run-name``, read back.

A ``workflow_job`` delivery names its run (``run_id``), the job, its labels and (in newer
payloads) the workflow's name, but none of the dispatch inputs. ``workflows/magi.yml``
therefore names each run after what it is for (``run-name:``), and GitHub shows that name as
the run's ``display_title`` (``GET /repos/{o}/{r}/actions/runs/{run_id}``):

    magi compete, issue #12, run 20261201-093000-0a1b
    magi land, issue #12, PR #40
    magi merge, PR #40          (a merge comment; a CI workflow_run: "magi merge")

``parse_title`` reads exactly what the expression renders (``title`` is its inverse);
anything else is not magi's (a user's own workflow, or one renamed by hand): ``None``.
https://docs.github.com/en/actions/writing-workflows/workflow-syntax-for-github-actions#run-name
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["WORKFLOW_NAME", "RunTitle", "parse_title", "title"]

WORKFLOW_NAME = "magi"  # the workflow's `name:`: newer workflow_job payloads carry it

_TITLE = re.compile(
    r"^magi (?P<command>[a-z][a-z-]{0,30})"
    r"(?:, issue #(?P<issue>[1-9][0-9]{0,9}))?"
    r"(?:, PR #(?P<pr>[1-9][0-9]{0,9}))?"
    r"(?:, run (?P<run>[A-Za-z0-9._-]{1,64}))?$"
)


@dataclass(frozen=True)
class RunTitle:
    """What a magi workflow run is for."""

    command: str  # compete, council, review, land, rebase, merge
    issue: int | None = None
    pr: int | None = None
    run: str | None = None  # magi's run id, when the App assigned one


def parse_title(display_title: str) -> RunTitle | None:
    """The run's purpose from its display title, or None when it is not magi's."""
    m = _TITLE.match(display_title or "")
    if m is None:
        return None
    return RunTitle(
        command=m["command"],
        issue=int(m["issue"]) if m["issue"] else None,
        pr=int(m["pr"]) if m["pr"] else None,
        run=m["run"],
    )


def title(t: RunTitle) -> str:
    """The display title the workflow's ``run-name:`` renders for ``t`` (the inverse)."""
    parts = [f"magi {t.command}"]
    if t.issue is not None:
        parts.append(f"issue #{t.issue}")
    if t.pr is not None:
        parts.append(f"PR #{t.pr}")
    if t.run:
        parts.append(f"run {t.run}")
    return ", ".join(parts)
