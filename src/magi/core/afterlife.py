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
    """The base branch's first-parent history: which commits are on it, which are reverted."""

    on_base: frozenset[str]
    reverted_sha: frozenset[str]  # full or abbreviated shas named by "This reverts commit"
    reverted_subject: frozenset[str]

    def reverts(self, sha: str, subject: str) -> bool:
        if subject in self.reverted_subject:
            return True
        return any(sha.startswith(short) for short in self.reverted_sha)


def history(commits: Iterable[Commit]) -> History:
    on, shas, subjects = set(), set(), set()
    for c in commits:
        on.add(c.sha)
        shas.update(_REVERTS.findall(c.message))
        first = c.message.splitlines()[0] if c.message else ""
        m = _REVERT_SUBJECT.match(first)
        if m:
            subjects.add(m.group(1))
    return History(frozenset(on), frozenset(shas), frozenset(subjects))


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
) -> dict[str, tuple[Fate, bool]]:
    """(fate, needed a follow-up) per run id. ``later_runs``: run start times by source."""
    out: dict[str, tuple[Fate, bool]] = {}
    for x in landed:
        if x.commit not in base.on_base:
            fate: Fate = "gone"
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
