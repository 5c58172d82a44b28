"""Hidden markers in magi's own comments and PR bodies: how a stateless App finds its state.

The App keeps nothing in memory. What it must remember (which run an issue started, which
workflow run carries it, which ``merge`` comment approved which SHA, which refusal it has
already said) is written into its own comments as an HTML comment ``<!-- magi:KIND k=v ... -->``
and read back from the issue's comments, so two replicas and a restart see the same thing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

_MARKER = re.compile(r"<!--\s*magi:([a-z-]+)((?:\s+[a-z_-]+=[^\s>]*)*)\s*-->")
_PAIR = re.compile(r"([a-z_-]+)=([^\s>]*)")
_VALUE = re.compile(r"^[A-Za-z0-9._/:#-]*$")

RUN = "run"  # the acknowledgement of a labeled issue: run=, issue=, workflow_run=
APPROVAL = "approval"  # a merge comment accepted: comment=, sha=
GATE = "gate"  # a refusal said once: approval=, reason=, sha=
PR = "pr"  # in a magi PR's body: issue=, run=
REFUSAL = "refusal"  # any other reply said once: key=
TRACKING = "tracking"  # the issue's tracking comment (publish, the App): issue=, run=, spent=


def marker(kind: str, **fields: object) -> str:
    """One marker; values are restricted to a safe alphabet so they read back exactly."""
    parts = []
    for key, value in fields.items():
        text = str(value)
        if not _VALUE.match(text):
            raise ValueError(f"marker value {text!r} for {key} has characters markers refuse")
        parts.append(f"{key}={text}")
    return f"<!-- magi:{kind} {' '.join(parts)} -->"


def read(text: str) -> list[tuple[str, dict[str, str]]]:
    """Every marker in ``text``: its kind and fields, in order."""
    return [(m[1], dict(_PAIR.findall(m[2]))) for m in _MARKER.finditer(text or "")]


def find(bodies: Iterable[str], kind: str, **match: str) -> list[dict[str, str]]:
    """The fields of every ``kind`` marker in ``bodies`` whose fields include ``match``."""
    found: list[dict[str, str]] = []
    for body in bodies:
        for k, fields in read(body):
            if k == kind and all(fields.get(a) == b for a, b in match.items()):
                found.append(fields)
    return found


def latest(bodies: Iterable[str], kind: str, **match: str) -> Mapping[str, str] | None:
    """The last matching marker, or None."""
    hits = find(bodies, kind, **match)
    return hits[-1] if hits else None


# GitHub's closing keywords: https://docs.github.com/en/issues/tracking-your-work-with-issues/using-issues/linking-a-pull-request-to-an-issue
_CLOSES = re.compile(r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s+#(\d+)\b", re.IGNORECASE)


def issue_of_pull(body: str | None) -> int | None:
    """The issue a magi PR came from: its ``magi:pr issue=`` marker, else a closing keyword."""
    found = latest([body or ""], PR)
    issue = (found or {}).get("issue", "")
    if issue.isdigit():
        return int(issue)
    match = _CLOSES.search(body or "")
    return int(match[1]) if match else None
