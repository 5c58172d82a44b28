"""The afterlife of merged runs, read from each repository's base branch
(``core.figures.afterlife``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from magi.core.figures.afterlife import Commit, Fate, Landed, fates, history
from magi.core.figures.stats import merged_runs
from magi.errors import MagiError
from magi.git.repo import Git
from magi.model.run import Run

__all__ = ["read_fates"]


def _log(git: Git, base: str) -> list[Commit]:
    out = git.run("log", "--first-parent", "--format=%H%x00%B%x01", "--end-of-options", base)
    commits = []
    for entry in out.split("\x01"):
        sha, _, body = entry.strip("\n").partition("\x00")
        if sha:
            commits.append(Commit(sha, body.strip()))
    return commits


def read_fates(
    runs: Sequence[Run], *, now: datetime, settle_days: int
) -> dict[str, tuple[Fate | None, bool]]:
    """Each run whose winner merged: its fate on its base and whether its issue needed
    another run (fate None where the repository, the base or the commit cannot be read)."""
    # Follow-ups within one repository: `issue:5` of two repositories are two issues.
    later: defaultdict[str, defaultdict[str, list[datetime]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for r in runs:
        later[r.repo][r.task.source].append(r.created_at)
    groups: defaultdict[tuple[str, str], list[Run]] = defaultdict(list)
    for r in runs:
        m = r.merge
        if m is not None and m.result == "merged" and m.commit and m.base and m.at:
            groups[(r.repo, m.base)].append(r)
    out: dict[str, tuple[Fate | None, bool]] = dict(merged_runs(runs))
    for (repo, base), merged in groups.items():
        git = Git(Path(repo))
        try:
            commits = _log(git, base)
        except (MagiError, OSError):
            continue  # the records' own word stands: merged, fate unknown
        subjects = {c.sha: c.message.splitlines()[0] if c.message else "" for c in commits}
        landed = [
            Landed(
                run=r.id,
                commit=r.merge.commit,
                subject=subjects.get(r.merge.commit, ""),
                at=r.merge.at,
                source=r.task.source,
            )
            for r in merged
            if r.merge is not None and r.merge.commit and r.merge.at
        ]
        known = {c.sha for c in commits}
        unknown = [
            x.commit
            for x in landed
            if x.commit not in known
            and git.run("cat-file", "-t", x.commit, check=False).strip() != "commit"
        ]
        out.update(
            fates(
                landed,
                history(commits),
                now=now,
                settle_days=settle_days,
                later_runs=later[repo],
                unknown=unknown,
            )
        )
    return out
