"""An agent's question to a person, as data: what a question may hold, how an answer matches.

``magi ask`` (run by an agent mid-turn) and ``magi answer`` (run by a person) meet in the
seat's mailbox (``magi.seats.mailbox``); what passes through it is decided here, with no
I/O. A question is an agent's words: it is capped and cleaned like any agent text, never
read as an instruction, and shown attributed to its seat (``implement · B``), never to
an agent.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from magi.core.text.bounds import cap
from magi.core.text.sanitize import strip_controls

SUMMARY_MAX = 500  # characters: a question is a sentence or two, not a document
CHOICE_MAX = 120
CHOICES_MAX = 8
SAY_MAX = 2000  # a person's words back to the agent
ID = re.compile(r"[0-9a-f]{4}")

# What ``magi ask`` prints when the run has asked all it may (``[ask] max_per_run``), or
# nobody can answer where the run is (a runner's agents job).
DECIDE = "Nobody will answer this now: decide yourself, and say in your summary what you decided."


# What ``magi ask`` prints where the answer comes after the turn (a runner's agents job holds
# no way to reach a person): the run parks ``asking`` once the wave is done, the question is
# posted on the issue, and the person's answer is this seat's next turn.
PARK = (
    "A person will answer this after your turn, not now: end your turn here. Commit what you "
    "have so far and say in your summary where you stopped; your next turn brings the answer."
)


# What a ``magi ask`` still waiting when its seat's turn ended reads: nobody will answer.
ENDED = "Your turn ended before anyone answered: nobody will answer this question now."


class BadQuestion(ValueError):
    """A question or an answer that cannot be taken, with why."""


@dataclass(frozen=True)
class Asked:
    """One turn of a question thread, cleaned: what the agent asks and may be answered with."""

    summary: str
    choices: tuple[str, ...]


def _line(text: str, limit: int) -> str:
    one = " ".join(strip_controls(text).split())
    return cap(one, limit, keep="head") if len(one) > limit else one


def clean(summary: str, choices: list[str]) -> Asked:
    """The question as magi keeps and shows it: one line each, capped, no control bytes."""
    said = _line(summary, SUMMARY_MAX)
    if not said:
        raise BadQuestion("a question needs --summary: what the agent wants to know")
    kept: list[str] = []
    for c in choices:
        one = _line(c, CHOICE_MAX)
        if one and one.casefold() not in {k.casefold() for k in kept}:
            kept.append(one)
    if len(kept) > CHOICES_MAX:
        raise BadQuestion(f"at most {CHOICES_MAX} --choice values (got {len(kept)})")
    return Asked(said, tuple(kept))


def match(answer: str, choices: tuple[str, ...]) -> str:
    """The choice ``answer`` names (its text, case-insensitively, or its number from 1)."""
    want = answer.strip()
    for c in choices:
        if c.casefold() == want.casefold():
            return c
    if want.isdigit() and 1 <= int(want) <= len(choices):
        return choices[int(want) - 1]
    listed = ", ".join(f"{i}. {c}" for i, c in enumerate(choices, start=1))
    if not choices:
        raise BadQuestion('this question has no choices: answer it with --say "..."')
    raise BadQuestion(f"{want!r} is not one of its choices ({listed}); or answer with --say")


def said(words: str) -> str:
    """A person's free answer (``--say``), as the agent receives it."""
    text = strip_controls(words).strip()
    if not text:
        raise BadQuestion("--say needs words")
    return cap(text, SAY_MAX, keep="head") if len(text) > SAY_MAX else text


def where(node: str, label: str, seat: str) -> str:
    """Who asks, as a person reads it: the node and the candidate's label, or the seat."""
    return f"{node} · {label}" if label else f"{node} · {seat}"


@dataclass(frozen=True)
class Reply:
    """A person's answer to one waiting question, as the agent will get it."""

    qid: str
    how: str  # "choice" or "say"
    text: str


def pick(
    waiting: list[tuple[str, tuple[str, ...]]], words: str, others: Collection[str] = ()
) -> Reply:
    """Which waiting question ``words`` answers, and how: ``/magi answer [ID] <choice or words>``.

    ``waiting`` is (id, choices of its last turn) of each question the run waits on. With one
    waiting, the id may be left out; with several it must come first. Words that name one of
    the question's choices (its text or its number) choose it; any other words are said back.
    ``others``: the run's other question ids: words that start with one answer a question
    nobody waits on any more, and are refused rather than given to another.
    """
    parts = words.strip().split(maxsplit=1)
    ids = [qid for qid, _ in waiting]
    if not waiting:
        raise BadQuestion("no agent of this run is waiting on an answer")
    if parts and parts[0].lower() in set(others) - set(ids):
        listed = ", ".join(f"`{i}`" for i in ids)
        raise BadQuestion(
            f"question {parts[0].lower()} is not waiting any more (waiting: {listed})"
        )
    if parts and parts[0].lower() in ids:
        qid, rest = parts[0].lower(), parts[1] if len(parts) > 1 else ""
    elif len(waiting) == 1:
        qid, rest = ids[0], words
    else:
        listed = ", ".join(f"`{i}`" for i in ids)
        raise BadQuestion(f"{len(ids)} questions are waiting ({listed}): name one first")
    if not rest.strip():
        raise BadQuestion(f"no answer to question {qid}: write it after `/magi answer`")
    choices = dict(waiting)[qid]
    try:
        return Reply(qid, "choice", match(rest, choices))
    except BadQuestion:
        return Reply(qid, "say", said(rest))
