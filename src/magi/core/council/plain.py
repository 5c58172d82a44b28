"""Seed 004's plain vote block, read into the review answer's fields (or refused, with why).

A reviewer may answer the way seed 004's own prompt asks, instead of with a json block::

    ### Vote
    **VOTE:** CONDITIONAL
    CONFIDENCE: HIGH
    REASON: the cache is never invalidated
    CONDITIONS:
    - invalidate on config reload
    VETO: NO

Keys are read case-insensitively, from lines outside any fenced block (a quoted prompt
or diff is not a vote), with markdown decoration ignored: bullets, headings, quotes,
``**bold**`` and backticks, square brackets round a value, a full-width colon. A value
is one word: ``VOTE: APPROVE/REJECT`` (an echoed template) names no vote, and it is refused
rather than read as its first word. Two ``VOTE`` lines that differ are one answer holding
two votes: refused, never the first one. ``REASON`` runs on over the lines below it until
a blank line or the next key; ``CONDITIONS`` is the list items below it (and any text on
its own line). The block has no findings, so a plain ``VETO: YES`` is a claim without a
critical finding and ``core.council.review`` ignores it, saying why.
"""

from __future__ import annotations

import re
from typing import Any

from magi.core.text.payload import outside, split_lines
from magi.errors import AnswerError

__all__ = ["CONFIDENCE_WORDS", "VOTES", "plain_vote", "vote_words"]

VOTES = ("APPROVE", "REJECT", "ABSTAIN", "CONDITIONAL")
# Seed 004 gives confidence as a word; the json form (and the matrix) as a number.
CONFIDENCE_WORDS = {"HIGH": 0.9, "MEDIUM": 0.6, "LOW": 0.3}

_KEY = re.compile(r"^(vote|reason|confidence|conditions?|veto)\s*[:：]\s*(.*)$", re.IGNORECASE)
_ITEM = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(.*\S)\s*$")
_EDGE = re.compile(r"^[\W_]+|[\W_]+$")


def _bare(line: str) -> str:
    """``line`` without markdown decoration round a key: bold, backticks, bullets, headings."""
    s = line.replace("*", "").replace("`", "").strip()
    return s.lstrip("#>-+• \t").strip()


def _word(value: str) -> str:
    return _EDGE.sub("", value).upper()


def _keyed(lines: list[str]) -> list[tuple[int, str, str]]:
    """``(index, key, value)`` of every key line outside a fenced block."""
    out = []
    for i, line in outside(lines):
        m = _KEY.match(_bare(line))
        if m:
            key = m.group(1).lower()
            out.append((i, "conditions" if key == "condition" else key, m.group(2).strip()))
    return out


def vote_words(text: str) -> list[str]:
    """The value of every ``VOTE`` line outside a fenced block, upper-cased, undecorated."""
    return [_word(v) for _, k, v in _keyed(split_lines(text)) if k == "vote"]


def _one(key: str, values: list[str]) -> str | None:
    words = list(dict.fromkeys(_word(v) for v in values))
    if len(words) > 1:
        raise AnswerError(
            f"two different {key.upper()} lines ({', '.join(words)}): one answer holds one {key}"
        )
    return words[0] if words else None


def _vote(values: list[str]) -> str:
    word = _one("vote", values)
    if word not in VOTES:
        raise AnswerError(
            f"the VOTE line names no vote ({', '.join(values)[:40]!r}); give exactly one of "
            + ", ".join(VOTES)
        )
    return word


def _confidence(values: list[str]) -> float | None:
    if not values:
        return None
    word = _one("confidence", values) or ""
    if word in CONFIDENCE_WORDS:
        return CONFIDENCE_WORDS[word]
    try:
        number = float(word)
    except ValueError:
        number = -1.0
    if not 0 <= number <= 1:
        raise AnswerError(f"CONFIDENCE {word[:20]!r} is not HIGH, MEDIUM, LOW or 0 to 1")
    return number


def _veto(values: list[str]) -> bool:
    word = _one("veto", values)
    if word in (None, "NO", "FALSE"):
        return False
    if word in ("YES", "TRUE"):
        return True
    raise AnswerError(f"VETO {word[:20]!r} is not YES or NO")


def _following(lines: list[str], start: int, keyed: set[int]) -> list[str]:
    """The lines after ``start`` up to a blank line, a key line, a heading or a fence."""
    out = []
    for i in range(start + 1, len(lines)):
        s = lines[i].strip()
        if not s or i in keyed or s.startswith(("#", "```")):
            break
        out.append(lines[i])
    return out


def _conditions(lines: list[str], entries: list[tuple[int, str]], keyed: set[int]) -> list[str]:
    out = []
    for i, inline in entries:
        if inline and not re.fullmatch(r"[-\W_]*|none", inline, re.IGNORECASE):
            out.append(inline)
        for line in _following(lines, i, keyed):
            m = _ITEM.match(line.replace("**", "").replace("`", ""))
            if m is None:
                raise AnswerError(f"CONDITIONS holds {line.strip()[:40]!r}, which is no list item")
            out.append(m.group(1))
    return out


def plain_vote(text: str) -> dict[str, Any] | None:
    """The review answer's fields from the plain block in ``text``; None when it has no VOTE.

    ``AnswerError`` when the block is there but cannot be read as one vote.
    """
    lines = split_lines(text)
    keyed = _keyed(lines)
    by: dict[str, list[tuple[int, str]]] = {}
    for i, key, value in keyed:
        by.setdefault(key, []).append((i, value))
    if "vote" not in by:
        return None
    at = {i for i, _, _ in keyed}
    fields: dict[str, Any] = {"vote": _vote([v for _, v in by["vote"]])}
    reasons = [
        " ".join([value, *(s.strip() for s in _following(lines, i, at))]).strip()
        for i, value in by.get("reason", [])
    ]
    if any(reasons):
        fields["reason"] = " ".join(r for r in reasons if r)
    confidence = _confidence([v for _, v in by.get("confidence", [])])
    if confidence is not None:
        fields["confidence"] = confidence
    fields["veto"] = _veto([v for _, v in by.get("veto", [])])
    fields["conditions"] = _conditions(lines, by.get("conditions", []), at)
    return fields
