"""An Actions job that failed for the machine's reasons, not the code's: read from its log.

Pure. A red check whose job never ran the code to the end (the runner was lost or shut
down, the job was cancelled, no runner took it) says nothing about the change, and an agent
must not be paid to "fix" it: landing re-runs it instead (``magi.app.rerun``, bounded) and
never spends a fix round on it. ``infra_failure`` reads a check's conclusion and the tail of
its job log and the jobs API's facts about the job, and answers which rule shows the machine
failed, or None when nothing does: a failure is the code's unless the runner says otherwise.

The log is the code's to write: a test can print any words, and a step's ``::error::``
shows in the log as the runner's own ``##[error]`` does. So the log's words count only on a
``##[error]`` line, and only when the jobs API says no step of the job concluded
``failure`` (a step the runner lost or cancelled does not) or no runner took the job at all;
without those facts the failure is the code's. Words a test can make true by itself
("No space left on device": it can fill the disk) are not the machine's. What magi posts
is the rule's own description, never the log's text. A job that ran out its own
``timeout-minutes`` is the code's too (a test that hangs), even though Actions then
cancels it; so is a cancel because a sibling job failed (``fail-fast``: the sibling's red
check is the code's, and it goes to the fixer with this one). The words matched are the
Actions runner's and service's own, as a job's log shows them
(https://github.com/actions/runner).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["INFRA_CONCLUSIONS", "Ran", "infra_failure"]

# Conclusions that are never the code's: the job was stopped, or never started.
# https://docs.github.com/en/rest/checks/runs#get-a-check-run (conclusion)
INFRA_CONCLUSIONS = frozenset({"cancelled", "startup_failure", "stale"})

# (the runner's words, what magi says matched); read only on a runner's ``##[error]`` line.
_MACHINE = [
    (re.compile(p, re.IGNORECASE), said)
    for p, said in (
        (r"The runner has received a shutdown signal", "the runner received a shutdown signal"),
        (
            r"runner[^\n]{0,80}lost communication with the server",
            "the runner lost communication with the server",
        ),
        (r"The operation was canceled", "the runner canceled the job"),
        (r"The job was not acquired by Runner", "no runner acquired the job"),
        (
            r"(?:timed out|exceeded)[^\n]{0,80}(?:waiting for|acquir\w*)[^\n]{0,20} runner",
            "no runner picked the job up in time",
        ),
        (r"An error occurred while provisioning resources", "GitHub could not provision a runner"),
        (
            r"runner[^\n]{0,40} encountered an error while running your job",
            "the runner failed while running the job",
        ),
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
# A line the runner marks as an error, after the log's optional timestamp.
_RUNNER_LINE = re.compile(r"^(?:\S+Z )?##\[error\](.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Ran:
    """What the jobs API says about a job (``GET .../actions/runs/{run_id}/jobs``)."""

    runner: str  # "" when no runner took it
    steps: Sequence[str | None] = ()  # each step's conclusion


def _runner_words(log: str) -> str | None:
    for line in _RUNNER_LINE.finditer(log):
        for p, said in _MACHINE:
            if p.search(line[1]):
                return said
    return None


def infra_failure(conclusion: str | None, log: str | None, ran: Ran | None = None) -> str | None:
    """Which rule shows the job failed for the machine's reasons, or None (the code's).

    ``ran``: the jobs API's facts, None when unknown (then only the conclusion counts)."""
    text = log or ""
    if any(p.search(text) for p in _CODE):
        return None
    if ran is not None and not ran.runner:
        return "no runner took the job"
    if ran is not None and "failure" not in ran.steps and (words := _runner_words(text)):
        return words
    if (conclusion or "").lower() in INFRA_CONCLUSIONS:
        return f"the job ended {conclusion}"
    return None
