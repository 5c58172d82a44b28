"""A seat's answer made fit to relay: what the clerk, the other seats and the comment get.

Everything a seat writes is data, and in a council it travels: into the clerk's prompt,
into every other seat's debate prompt, into the record and the matrix on GitHub. So each
string of a validated answer is cleaned once, as it arrives, before anything reads it:

1. invisible characters go (bidi overrides, tag characters, zero-width: ``clean_task``'s
   classes, counted as the competition counts them);
2. secrets and personal data are redacted (``redact_secrets(personal=True)``, as the
   question was);
3. words that would say who wrote it (vendor names, roster ids, kinds, models:
   ``core.compete.blind.leak_terms``) become ``[redacted]``, except the terms the question itself
   uses: "should we use Gemini?" must be answerable with "Gemini";
4. it is capped at ``[graph] text_max_chars`` with the competition's cut marker.

The cleaned answer is validated again against its shape, so what the engine counts is
exactly what is recorded and relayed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from magi.core.compete.blind import leak_terms, redact_terms
from magi.core.text.bounds import cap
from magi.core.text.sanitize import clean_task, redact_secrets
from magi.model.config import AgentConfig
from magi.model.run import Redaction

__all__ = ["Cleaned", "answer_cleaner"]


class Cleaned:
    """What cleaning removed from one answer: redactions by kind, and notes."""

    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()
        self.notes: list[str] = []

    def redactions(self, where: str) -> list[Redaction]:
        return [Redaction(where=where, kind=k, count=n) for k, n in sorted(self.kinds.items())]

    def __bool__(self) -> bool:
        return bool(self.kinds or self.notes)


def answer_cleaner(
    agents: Sequence[AgentConfig], question: str, limit: int
) -> Callable[[Any], tuple[Any, Cleaned]]:
    """A function cleaning every string of a JSON answer (see the module docstring)."""
    asked = question.casefold()
    terms = [t for t in leak_terms(agents) if t.casefold() not in asked]

    def clean(data: Any) -> tuple[Any, Cleaned]:
        found = Cleaned()

        def text(value: str) -> str:
            value, removed = clean_task(value)
            found.notes += removed
            value, hits = redact_secrets(value, "answer", personal=True)
            for r in hits:
                found.kinds[r.kind] += r.count
            named = redact_terms(value, terms)
            if named != value:
                found.kinds["author_identity"] += named.count("[redacted]") - value.count(
                    "[redacted]"
                )
            capped = cap(named, limit)
            if capped != named:
                found.notes.append(f"{len(named) - limit} characters over the cap cut")
            return capped

        def walk(v: Any) -> Any:
            if isinstance(v, str):
                return text(v)
            if isinstance(v, list):
                return [walk(x) for x in v]
            if isinstance(v, dict):
                return {k: walk(x) for k, x in v.items()}
            return v

        return walk(data), found

    return clean
