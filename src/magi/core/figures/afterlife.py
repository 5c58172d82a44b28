"""Do winners stay merged? A merged run's fate, read from the base branch's history.

The election is worth what its winners are worth after they land (seed 000, ``magi
stats``): a winner that is reverted a week later was a wrong pick however clean its tally.
For every run whose winner was squashed onto the base, the base's history (newest first, as
``git log`` gives it) tells:

* ``stayed``: the squash commit is still on the base, no commit reverts it, and it landed at
  least ``settle_days`` ago;
* ``reverted``: a later commit on the base says ``This reverts commit <sha>`` (what ``git
  revert`` writes) or is subjected ``Revert "<the squash's subject>"``;
* ``gone``: the squash commit is no longer on the base at all (history rewritten);
* ``settling``: on the base, not reverted, but landed too recently to say.

A run whose issue needed another magi run after the merge (same task source, created later)
``needed_follow_up``. Pure: the caller reads the history and the clock.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

__all__ = ["Commit", "Fate", "History", "fates", "history"]

Fate = Literal["stayed", "reverted", "gone", "settling"]
_REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,64})")
_REVERT_SUBJECT = re.compile(r'^Revert "(.*)"$')


@dataclass(frozen=True)
class Commit:
    sha: str
    message: str


@dataclass(frozen=True)
class History:
    """The base branch's first-parent history, newest first: where each commit stands, and
    what each later commit reverts (a revert counts only when it came after the squash)."""

    order: Mapping[str, int]  # sha -> position, 0 the newest
    reverted_sha: Sequence[tuple[int, str]]  # (position of the revert, sha it names)
    reverted_subject: Sequence[tuple[int, str]]  # (position of the revert, subject it names)

    @property
    def on_base(self) -> frozenset[str]:
        return frozenset(self.order)

    def reverts(self, sha: str, subject: str) -> bool:
        at = self.order.get(sha)
        if at is None:
            return False
        newer = [(i, s) for i, s in self.reverted_sha if i < at]
        if any(sha.startswith(short) for _, short in newer):
            return True
        return any(i < at and s == subject for i, s in self.reverted_subject)


def history(commits: Iterable[Commit]) -> History:
    """``commits`` newest first, as ``git log --first-parent`` gives them."""
    order: dict[str, int] = {}
    shas: list[tuple[int, str]] = []
    subjects: list[tuple[int, str]] = []
    for i, c in enumerate(commits):
        order[c.sha] = i
        shas += [(i, named) for named in _REVERTS.findall(c.message)]
        first = c.message.splitlines()[0] if c.message else ""
        m = _REVERT_SUBJECT.match(first)
        if m:
            subjects.append((i, m.group(1)))
    return History(order, tuple(shas), tuple(subjects))


@dataclass(frozen=True)
class Landed:
    run: str
    commit: str
    subject: str
    at: datetime
    source: str  # the task's source (issue:N, cli, ...)


def fates(
    landed: Sequence[Landed],
    base: History,
    *,
    now: datetime,
    settle_days: int,
    later_runs: Mapping[str, Sequence[datetime]] | None = None,
    unknown: Iterable[str] = (),
) -> dict[str, tuple[Fate | None, bool]]:
    """(fate, needed a follow-up) per run id. ``later_runs``: run start times by source (of
    one repository); ``unknown``: squash commits this repository does not have at all (a PR
    merged on GitHub and not fetched yet), whose fate is None: not known, not "gone"."""
    missing = set(unknown)
    out: dict[str, tuple[Fate | None, bool]] = {}
    for x in landed:
        fate: Fate | None
        if x.commit not in base.on_base:
            fate = None if x.commit in missing else "gone"
        elif base.reverts(x.commit, x.subject):
            fate = "reverted"
        elif now - x.at < timedelta(days=settle_days):
            fate = "settling"
        else:
            fate = "stayed"
        after = (later_runs or {}).get(x.source, ())
        follow = x.source.startswith("issue:") and any(t > x.at for t in after)
        out[x.run] = (fate, follow)
    return out
