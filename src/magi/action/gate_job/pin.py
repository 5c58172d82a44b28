"""``magi action pin``: the task job hands the compete job the issue text the label pinned.

Run after the claim, with the job's read token and the App's key: it reads the claim
commit (``magi.github.pin.read_pin``), checks the sealed digest, and writes ``pinned.json``
beside the live ``issue.json``: the pinned title and body, and whether the issue reads
differently now. A claim that pins nothing (an older magi's) writes nothing: the run works
on the issue as it reads now, as before.
"""

from __future__ import annotations

import json
from pathlib import Path

from magi.core.threads.markers import Seal
from magi.core.threads.pin import PINNED, Pinned
from magi.errors import ActionError
from magi.github.models import Repo
from magi.github.pin import read_pin
from magi.github.port import GitHubPort

__all__ = ["pin_files"]


def _live(issue_file: Path, issue: int) -> tuple[str, str]:
    try:
        data = json.loads(issue_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ActionError(f"cannot read the issue file {issue_file}: {e}") from None
    if not isinstance(data, dict) or data.get("number") != issue:
        raise ActionError(f"{issue_file} is not issue #{issue}")
    return str(data.get("title") or ""), str(data.get("body") or "")


async def pin_files(
    port: GitHubPort, repo: Repo, issue: int, issue_file: Path, seal: Seal
) -> Pinned | None:
    """Write ``pinned.json`` beside ``issue_file`` from the claim's pin; what it wrote."""
    live = _live(issue_file, issue)
    pinned = await read_pin(port, repo, issue, seal)
    out = issue_file.parent / PINNED
    if pinned is None:
        out.unlink(missing_ok=True)
        return None
    pinned = Pinned(pinned.title, pinned.body, edited=live != (pinned.title, pinned.body))
    data = {"number": issue, "title": pinned.title, "body": pinned.body, "edited": pinned.edited}
    out.write_text(json.dumps(data) + "\n", encoding="utf-8")
    return pinned
