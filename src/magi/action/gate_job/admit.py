"""Whether an event starts a competition, for a repository that runs the Action without the App.

The same rules as the App's, from the same ``magi.core`` functions: only a writer (GitHub's
folded permission, never ``author_association``) starts a run, by the label or by a
``/magi retry`` line (``core.threads.commands.parse``: not inside quotes or code); a dispatch was
already decided by the App; an issue that already has magi's pull request (its tracking
marker says so) is never competed again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from magi.core.threads import markers
from magi.core.threads.approval import is_bot, may_write, permission_level
from magi.core.threads.commands import Verb, parse
from magi.core.threads.markers import Seal
from magi.errors import ActionError

__all__ = ["Admission", "admit", "admit_files"]


@dataclass(frozen=True)
class Admission:
    issue: int | None  # None: refused
    why: str


def _refused(why: str) -> Admission:
    return Admission(None, why)


def admit(
    event: str,
    payload: Mapping[str, Any],
    permission: str | None,
    comments: Sequence[Mapping[str, Any]],
    seal: Seal,
    label: str = "magi",
) -> Admission:
    """The issue to compete on, or why not (pure: the caller read the event and the API)."""
    issue = payload.get("issue") or {}
    if event == "workflow_dispatch":
        number = str((payload.get("inputs") or {}).get("issue", ""))
        if not number.isdigit():
            return _refused(f"not an issue number: {number!r}")
        return Admission(int(number), "dispatched")
    if not isinstance(issue, Mapping) or not isinstance(issue.get("number"), int):
        return _refused("the event is not about an issue")
    if issue.get("pull_request"):
        return _refused("magi competes on issues, not on pull requests")
    sender = payload.get("sender") or {}
    login, kind = str(sender.get("login", "")), str(sender.get("type", "User"))
    if is_bot(login, kind):
        return _refused(f"{login} is a bot")
    if event == "issues":
        if payload.get("action") != "labeled" or (payload.get("label") or {}).get("name") != label:
            return _refused(f"not the `{label}` label")
    elif event == "issue_comment":
        body = str((payload.get("comment") or {}).get("body", ""))
        if not any(c.verb is Verb.RETRY for c in parse(body)):
            return _refused("no `/magi retry` line")
    else:
        return _refused(f"magi does not start on {event}")
    if not may_write(permission):
        return _refused(
            f"{login} has `{permission_level(permission)}` permission; only writers start magi"
        )
    bodies = [
        str(c.get("body", ""))
        for c in comments
        if is_bot(
            str((c.get("user") or {}).get("login", "")), str((c.get("user") or {}).get("type", ""))
        )
    ]
    opened = [
        m for m in seal.find(bodies, markers.TRACKING, issue=str(issue["number"])) if m.get("pr")
    ]
    if opened:
        return _refused(f"magi already opened #{opened[-1]['pr']} for this issue")
    return Admission(int(issue["number"]), f"{event} by {login}")


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ActionError(f"cannot read {path.name}: {e}") from None


def admit_files(
    event: str,
    event_file: Path,
    permission: str | None,
    comments_file: Path | None,
    seal: Seal,
) -> Admission:
    """``admit`` over the files a workflow step has: the event payload, the comments."""
    payload = _json(event_file)
    comments = _json(comments_file) if comments_file is not None else []
    if not isinstance(payload, dict) or not isinstance(comments, list):
        raise ActionError("the event or the comments are not what GitHub sends")
    return admit(event, payload, permission, comments, seal)
