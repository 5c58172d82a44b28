"""The issue text a writer's label accepted, pinned: what a run works on.

On a public repository the issue's author can edit it after a writer labeled it; a run
that read the issue when its runner started would work on words no writer saw. So when a
label is accepted (by the App, or without it by the workflow's admission job) the title
and body are stored in the claim commit (``issue.json``, its only file), and the commit's
message carries their sha256 in a marker sealed with the App's key (``markers.PIN``): a
writer with push access could write a claim, but only magi's key seals it. The run's task
job reads the pin back, checks the seal and the digest, and hands the compete job the
pinned text beside the live one (``pinned.json``). The run works on the pinned text; when
the issue changed after the label, its record says so and the tracking comment repeats it
(pinned-text-and-say, not wait-for-relabel: a writer who wants the new text re-labels,
and an edit cannot hold a run hostage).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

__all__ = ["EDITED", "PINNED", "PIN_FILE", "Pinned", "digest", "pin_bytes", "read_pinned"]

PIN_FILE = "issue.json"  # the claim commit's one file
PINNED = "pinned.json"  # beside the task job's issue.json: the pinned text, for compete
EDITED = (
    "The issue was edited after the label was accepted: this run works on its title and "
    "body as they were then. To compete on the new text, remove the label and add it again "
    "once this run has ended."
)


@dataclass(frozen=True)
class Pinned:
    title: str
    body: str
    edited: bool = False  # the issue read differently when the run started


def pin_bytes(title: str, body: str) -> bytes:
    """The stored form of an issue's text: canonical JSON, so its digest is one value."""
    data = {"body": body or "", "title": title or ""}
    return json.dumps(data, sort_keys=True, ensure_ascii=False).encode("utf-8")


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_pinned(data: Any, number: int) -> Pinned | None:
    """``pinned.json`` as the task job wrote it, or None when it is not this issue's."""
    if not isinstance(data, dict) or data.get("number") != number:
        return None
    title, body, edited = data.get("title"), data.get("body"), data.get("edited")
    if not isinstance(title, str) or not isinstance(body, str) or not isinstance(edited, bool):
        return None
    return Pinned(title, body, edited)
