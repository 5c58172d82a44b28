"""Whether a check event's payload alone shows it is about no magi PR (then it costs no call).

CI on every other pull request sends ``check_run``, ``check_suite``, ``status`` and
``workflow_run`` deliveries; reading GitHub to learn that each is not about a magi PR would
spend the installation's requests on other people's CI. The payload is enough to say *no*
for most: the PRs a check names, the branch it ran on, the branches a status's commit is on.
It is never enough to say *yes*: a name can be borrowed (a fork PR from a branch called
``magi/...``), so a payload that does not exclude still goes to the API and ``is_magi_pull``.

A magi PR's head is a ``magi/<run>/<label>`` branch in the base's own repository
(``magi.github.gate.is_magi_pull``), so a payload excludes when:

- it names PRs, and none has a ``magi/`` head in the base's repository;
- it names none (a fork's PR, or GitHub left them out) but says the branch the commit ran
  on, and that branch is not ``magi/...`` or lives in another repository;
- it is a ``status`` whose commit is on fewer than ``STATUS_BRANCHES`` branches (GitHub lists
  at most that many), none of them ``magi/...``: a magi PR's head is a branch's tip here.

https://docs.github.com/en/webhooks/webhook-events-and-payloads#status (``branches``: "a
maximum of 10 branches")
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["STATUS_BRANCHES", "NamedPull", "excludes"]

BRANCH_PREFIX = "magi/"
STATUS_BRANCHES = 10


@dataclass(frozen=True)
class NamedPull:
    """A PR as a check payload names it: its head branch and both repositories' ids (None
    where the payload does not say: unknown never excludes)."""

    head_ref: str | None
    head_repo: int | None
    base_repo: int | None


def _may_be_magis(p: NamedPull) -> bool:
    if p.head_ref is not None and not p.head_ref.startswith(BRANCH_PREFIX):
        return False
    return p.head_repo is None or p.base_repo is None or p.head_repo == p.base_repo


def excludes(
    *,
    named: Sequence[NamedPull] = (),
    head_branch: str | None = None,
    head_repo: int | None = None,
    repo: int | None = None,
    branches: Sequence[str] | None = None,
) -> bool:
    """True when the payload's facts alone show the event concerns no magi PR."""
    if named:
        return not any(_may_be_magis(p) for p in named)
    if head_branch is not None:
        elsewhere = head_repo is not None and repo is not None and head_repo != repo
        return elsewhere or not head_branch.startswith(BRANCH_PREFIX)
    if branches is not None and len(branches) < STATUS_BRANCHES:
        return not any(b.startswith(BRANCH_PREFIX) for b in branches)
    return False
