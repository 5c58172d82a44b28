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

from magi.app.context import AppContext
from magi.core.figures import stats as figures
from magi.github import records
from magi.github.models import Repo
from magi.github.port import GitHubError, GitHubPort
from magi.model.run import Run
from magi.report.view import revealed

SKIPPED_SHOWN = 20  # skipped records listed in the reply (all of them are logged)


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
    s = figures.compute(shown)
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


def _plain(text: str, limit: int = 300) -> str:
    """A ref name or reason as one line that cannot close its code span (it quotes data)."""
    return " ".join(text.replace("`", "'").split())[:limit]
