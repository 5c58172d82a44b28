"""``[notify] command``: the argv a notification runs, its fields put in word by word.

Seed 000: ``{summary}``, ``{run}`` and ``{url}`` (and here ``{event}``) are substituted into
the argv, never into a shell string, so a summary holding ``; rm -rf ~`` stays one argument
of the command the user wrote. A field's value is put in as it is: braces in it are not
placeholders (no ``str.format``), and nothing in it can add or split an argument. The
summary is one line of at most ``SUMMARY_MAX`` characters with nothing invisible, because it
lands on a phone's lock screen, not in a log.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence

from magi.model.config import FIELD_PATTERN as _FIELD
from magi.model.config import NOTIFY_FIELDS as FIELDS
from magi.model.config import unknown_fields

__all__ = ["EVENTS", "FIELDS", "SUMMARY_MAX", "argv", "event_of", "summary_of", "unknown_fields"]

# What a notification is sent for: a run ended, was held (budget, attempts), stalled (a
# quota), parked (`magi park`) or was interrupted, or an agent asked (`magi ask`).
EVENTS = ("ended", "held", "stalled", "parked", "interrupted", "asked")
SUMMARY_MAX = 300


def event_of(status: str) -> str:
    """The ``{event}`` of a run that stopped with ``status`` (a ``RunStatus`` value)."""
    if status == "asking":  # parked on a question: what the person is told is the question
        return "asked"
    return status if status in ("held", "stalled", "parked", "interrupted") else "ended"


def summary_of(run_id: str, status: str, reason: str | None) -> str:
    """The ``{summary}``: the run, how it stands, and why, in one line."""
    return f"magi run {run_id} {status}" + (f": {reason}" if reason else "")


def argv(command: Sequence[str], fields: Mapping[str, str]) -> list[str]:
    """``command`` with each known ``{field}`` replaced by its value, one pass per word."""
    values = {k: fields.get(k, "") for k in FIELDS}
    # Control, format (bidi, zero-width, tags) and the like go.
    seen = "".join(
        ch for ch in values["summary"] if unicodedata.category(ch)[0] != "C" or ch in "\t\n"
    )
    summary = " ".join(seen.split())
    if len(summary) > SUMMARY_MAX:
        summary = summary[: SUMMARY_MAX - 1].rstrip() + "…"
    values["summary"] = summary

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        return values[name] if name in values else match.group(0)

    return [_FIELD.sub(fill, word) for word in command]
