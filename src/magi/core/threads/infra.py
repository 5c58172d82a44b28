"""An Actions job that failed for the machine's reasons, not the code's: read from its log.

Pure. A red check whose job never ran the code to the end (the runner was lost or shut
down, the job was cancelled, no runner took it) says nothing about the change, and an agent
must not be paid to "fix" it: landing re-runs it instead (``magi.app.rerun``, bounded) and
never spends a fix round on it. ``infra_failure`` reads a check's conclusion and the tail of
its job log and answers the words that show the machine failed, or None when nothing does:
a failure is the code's unless the log says otherwise. A job that ran out its own
``timeout-minutes`` is the code's too (a test that hangs), even though Actions then
cancels it; so is a cancel because a sibling job failed (``fail-fast``: the sibling's red
check is the code's, and it goes to the fixer with this one). The words matched are the
Actions runner's and service's own, as a job's log shows them
(https://github.com/actions/runner).
"""

from __future__ import annotations

import re

__all__ = ["INFRA_CONCLUSIONS", "infra_failure"]

# Conclusions that are never the code's: the job was stopped, or never started.
# https://docs.github.com/en/rest/checks/runs#get-a-check-run (conclusion)
INFRA_CONCLUSIONS = frozenset({"cancelled", "startup_failure", "stale"})

_MACHINE = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"The runner has received a shutdown signal",
        r"runner[^\n]{0,80}lost communication with the server",
        r"The operation was canceled",
        r"The job was not acquired by Runner",
        r"(?:timed out|exceeded)[^\n]{0,80}(?:waiting for|acquir\w*)[^\n]{0,20} runner",
        r"An error occurred while provisioning resources",
        r"runner[^\n]{0,40} encountered an error while running your job",
        r"No space left on device",
    )
]
# The code's, even when Actions then cancels the job.
_CODE = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"has exceeded the maximum execution time",
        r"The job was canceled because [^\n]{0,200} failed",
    )
]


def _line(log: str, m: re.Match[str]) -> str:
    start = log.rfind("\n", 0, m.start()) + 1
    end = log.find("\n", m.end())
    return log[start : end if end >= 0 else len(log)].strip()[:200]


def infra_failure(conclusion: str | None, log: str | None) -> str | None:
    """The words showing the job failed for the machine's reasons, or None (the code's)."""
    text = log or ""
    if any(p.search(text) for p in _CODE):
        return None
    for p in _MACHINE:
        if m := p.search(text):
            return _line(text, m)
    if (conclusion or "").lower() in INFRA_CONCLUSIONS:
        return f"the job ended {conclusion}"
    return None
