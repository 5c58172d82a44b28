"""``/magi stats``: the figures of ``magi stats`` over the repository's run records.

The records are the ones publish keeps in ``refs/magi/runs/<id>``, read through the Git
Data API (``magi.github.records``, newest ``MAX_RECORDS`` first) and counted by the same pure
``magi.core.figures.stats`` under the same blind rule as the CLI (``magi.report.view.revealed``):
over the same records the reply is ``magi stats --markdown``'s figures. A record that
cannot be read is logged with its reason and listed, folded, under the figures; it is
never a reason not to answer. Records already read at the same commit come from the
App's ``RecordCache`` (``ctx.records``): a repeated `/magi stats` costs one listing call.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

from magi.app.context import AppContext
from magi.core.figures import stats as figures
from magi.core.figures.afterlife import Commit, Fate, Landed, fates, history
from magi.core.figures.stats import merged_runs
from magi.github import records
from magi.github.models import Repo
from magi.github.port import GitHubError, GitHubPort
from magi.model.review import MergeRecord
from magi.model.run import Run
from magi.report.view import revealed

SKIPPED_SHOWN = 20  # skipped records listed in the reply (all of them are logged)
SETTLE_DAYS = 7  # as `magi stats --settle-days`' default: a winner this long on its base stayed


async def reply(
    ctx: AppContext, gh: GitHubPort, repo: Repo, delivery: str, *, limit: int = records.MAX_RECORDS
) -> str:
    """The reply to ``/magi stats`` on ``repo``."""
    try:
        found = await records.read_all(gh, repo, limit=limit, cache=ctx.records)
    except GitHubError as exc:
        return (
            "magi could not list the run records (`refs/magi/runs/*`): GitHub answered"
            f" {exc.status or 'nothing'}: {exc.message}"
        )
    for skip in found.skipped:
        ctx.log.warning(
            f"run record skipped: {skip.ref}: {skip.reason}",
            extra={
                "delivery": delivery,
                "repo": repo.full_name,
                "step": "stats",
                "outcome": "skipped",
            },
        )
    competitions = [s.record for s in found.runs if isinstance(s.record, Run)]
    shown = [r for r in competitions if revealed(r)]
    s = figures.compute(shown, await afterlife(ctx, gh, repo, shown, delivery))
    s.hidden = len(competitions) - len(shown)
    lines = [figures.markdown(s, where="recorded").rstrip("\n")]
    other = len(found.runs) - len(competitions)
    notes = []
    if other:
        notes.append(f"{other} record(s) of another kind (a council) are not competitions.")
    if found.left_out:
        notes.append(
            f"Only the newest {limit} records were read; {found.left_out} older ones were not."
        )
    if notes:
        lines.extend(["", *notes])
    if found.skipped:
        listed = "\n".join(
            f"- `{_plain(k.ref)}`: {_plain(k.reason)}" for k in found.skipped[:SKIPPED_SHOWN]
        )
        more = len(found.skipped) - SKIPPED_SHOWN
        if more > 0:
            listed += f"\n- and {more} more (see the App's log)"
        lines.extend(
            [
                "",
                f"<details><summary>{len(found.skipped)} record(s) could not be read</summary>\n",
                listed,
                "\n</details>",
            ]
        )
    return "\n".join(lines)


async def afterlife(
    ctx: AppContext, gh: GitHubPort, repo: Repo, runs: list[Run], delivery: str
) -> dict[str, tuple[Fate | None, bool]]:
    """Each merged run's fate on its base, read from the base's history on GitHub (from a
    day before the first merge on: a revert comes after its squash), as ``magi stats``
    reads it from the local repository. Every record is of this repository, whatever runner
    path it names, so a follow-up is the same task source started later. A squash commit
    not in the history read is not known (the read is bounded), never "gone"."""
    out = dict(merged_runs(runs))
    later: defaultdict[str, list[datetime]] = defaultdict(list)
    for r in runs:
        later[r.task.source].append(r.created_at)
    by_base: defaultdict[str, list[tuple[Run, MergeRecord]]] = defaultdict(list)
    for r in runs:
        m = r.merge
        if m is not None and m.result == "merged" and m.commit and m.base and m.at:
            by_base[m.base].append((r, m))
    for base, merged in by_base.items():
        since = min(m.at for _, m in merged if m.at) - timedelta(days=1)
        try:
            listed = await gh.list_commits(repo, base, since=since)
        except GitHubError as exc:
            ctx.log.warning(
                f"the history of {base} could not be read: {exc.status or 'no answer'}",
                extra={"delivery": delivery, "repo": repo.full_name, "step": "stats"},
            )
            continue  # the records' own word stands: merged, fate unknown
        log = [Commit(c.sha, c.message.strip()) for c in listed]
        subjects = {c.sha: c.message.splitlines()[0] if c.message else "" for c in log}
        landed = [
            Landed(r.id, m.commit or "", subjects.get(m.commit or "", ""), m.at, r.task.source)
            for r, m in merged
            if m.at
        ]
        known = {c.sha for c in log}
        out.update(
            fates(
                landed,
                history(log),
                now=ctx.clock(),
                settle_days=SETTLE_DAYS,
                later_runs=later,
                unknown=[x.commit for x in landed if x.commit not in known],
            )
        )
    return out


def _plain(text: str, limit: int = 300) -> str:
    """A ref name or reason as one line that cannot close its code span (it quotes data)."""
    return " ".join(text.replace("`", "'").split())[:limit]
