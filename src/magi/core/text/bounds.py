"""Caps on text relayed between seats: each store and relay point keeps a bounded, marked cut.

A 3 MB rationale went whole into every other judge's prompt and made 43 MB of records for
one run (issue 7). Every text an agent wrote and magi keeps or passes on (rationales,
arguments, summaries, review details) goes through ``cap`` with the limit from the config;
the cut is marked so that no reader takes a truncated argument for the whole of it.
"""

from __future__ import annotations

from magi.errors import UsageError

MARK = "[... {n} characters cut by magi ...]"


def cap(text: str, limit: int, *, keep: str = "head") -> str:
    """``text`` if it fits ``limit`` characters, else its head (or tail) and a marker.

    The marker is counted inside ``limit`` so the result never exceeds it (a limit shorter
    than the marker keeps the marker alone).
    """
    if len(text) <= limit:
        return text
    marker = MARK.format(n=len(text) - limit)
    room = max(limit - len(marker) - 1, 0)
    marker = MARK.format(n=len(text) - room)
    if keep == "tail":
        return marker + "\n" + (text[len(text) - room :] if room else "")
    return (text[:room] if room else "") + "\n" + marker


def cap_bytes(text: str, limit: int) -> tuple[str, int]:
    """(``text`` cut to at most ``limit`` UTF-8 bytes at a character boundary, bytes over)."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text, 0
    return data[:limit].decode("utf-8", "ignore"), len(data) - limit


def decode_task(data: bytes, where: str) -> str:
    """A task file's bytes as text; invalid UTF-8 is a usage error naming the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        bad = data[e.start : e.start + 1]
        raise UsageError(
            f"{where} is not UTF-8 text (byte {e.start}, line {line}: {bad!r}); "
            "convert it, e.g. iconv -f latin1 -t utf-8"
        ) from None


def check_task(text: str, limit: int, what: str = "task") -> None:
    """A task (or a council's question) over ``limit`` UTF-8 bytes is refused before
    anything is recorded or spent."""
    size = len(text.encode("utf-8"))
    if size > limit:
        flag = (
            "--task-max-bytes (or [graph] task_max_bytes)"
            if what == "task"
            else ("[graph] task_max_bytes")
        )
        raise UsageError(
            f"the {what} is {size} bytes, over the {limit}-byte cap; shorten it, or raise the "
            f"cap with {flag}"
        )
