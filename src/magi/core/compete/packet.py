"""A candidate's judging packet: its facts, and untrusted material fenced off as data.

Everything a candidate or another judge wrote (a summary, a patch, verification output,
an argument) reaches a judge inside a ``<<<MATERIAL kind label`` ... ``MATERIAL>>>``
block, and the prompts say that whatever is between the markers is material under
judgement, never instructions. That promise only holds if material cannot end its own
block, so every marker-like run inside a body (any case, spaced, or split by invisible
characters) is rewritten with lookalike angle quotes (``‹‹‹``, ``›››``) that close nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from magi.model.run import FileStat

OPEN = "<<<MATERIAL"
CLOSE = "MATERIAL>>>"

# Spacing and invisible characters a model might read through when it sees a marker.
_GAP = r"[\s\u00ad\u200b-\u200f\u2060-\u2064\ufeff]*"
_OPENER = re.compile(rf"<<<(?={_GAP}material)", re.IGNORECASE)
_CLOSER = re.compile(rf"(material{_GAP})>>>", re.IGNORECASE)
_NAME = re.compile(r"[\w.-]+")


@dataclass(frozen=True)
class CandidatePacket:
    """One candidate as a judge sees it: facts magi measured, and material it wrote.

    ``patch`` is already cut by ``render_patch``; ``patch_truncated_bytes`` is what was cut.
    ``flags`` are magi's notes, e.g. "changes protected path .github/workflows/ci.yml".
    """

    label: str
    branch: str
    files: tuple[FileStat, ...]
    commits: int
    summary: str
    patch: str
    patch_truncated_bytes: int
    verification: str | None
    flags: tuple[str, ...]


def neutralise(text: str) -> str:
    """``text`` with every material marker defused, so it can open or close no block."""
    text = _OPENER.sub("‹‹‹", text)
    return _CLOSER.sub(r"\1›››", text)


def one_line(text: str) -> str:
    """``text`` fit for one line of a prompt: line breaks shown, markers defused."""
    flat = text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", " ")
    return neutralise(flat)


def material(kind: str, label: str, body: str) -> str:
    """``body`` fenced as untrusted material of ``kind`` belonging to ``label``."""
    for name, value in (("kind", kind), ("label", label)):
        if not _NAME.fullmatch(value):
            raise ValueError(f"material {name} must be a plain word, got {value!r}")
    inner = neutralise(body).rstrip("\n")
    return f"{OPEN} {kind} {label}\n{inner}\n{CLOSE}"


def render_patch(patch: str, max_bytes: int) -> tuple[str, int]:
    """``patch`` cut to at most ``max_bytes`` UTF-8 bytes on a line boundary; (text, bytes cut).

    When the first line alone is longer than the cap (a minified file), the cut falls
    inside it, on a character boundary: some of the change beats none of it.
    """
    if max_bytes < 0:
        raise ValueError(f"max_bytes must be >= 0, got {max_bytes}")
    data = patch.encode("utf-8")
    if len(data) <= max_bytes:
        return patch, 0
    head = data[:max_bytes]
    newline = head.rfind(b"\n")
    if newline >= 0:
        head = head[: newline + 1]
    text = head.decode("utf-8", errors="ignore")  # drops a character split by the cut
    return text, len(data) - len(text.encode("utf-8"))


def _cell(value: int | None) -> str:
    return "binary" if value is None else str(value)


def numstat_table(files: Sequence[FileStat]) -> str:
    """The files a candidate changed, as a Markdown table with a total row."""
    if not files:
        return "(no files changed)"
    rows = ["| added | deleted | file |", "| ---: | ---: | --- |"]
    for stat in files:
        # A path is chosen by the candidate: one line, no table breaks, no markers.
        path = one_line(stat.path).replace("|", "\\|")
        rows.append(f"| {_cell(stat.added)} | {_cell(stat.deleted)} | {path} |")
    added = sum(s.added or 0 for s in files)
    deleted = sum(s.deleted or 0 for s in files)
    noun = "file" if len(files) == 1 else "files"
    rows.append(f"| {added} | {deleted} | {len(files)} {noun} in total |")
    return "\n".join(rows)
