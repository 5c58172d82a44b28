"""``/magi council`` and ``/magi review`` on GitHub: the question a comment asks, names, tiers.

Pure: the App, the agents job and the publish job all read a command comment the same way.
The question is the text after ``/magi council`` on its line, or, when that is empty, the
rest of the comment below that line (a long question fits in a comment, not on one line).
``/magi council --research ...`` asks for research mode (findings cross-checked, as
``magi council --mode research``); the flag is not part of the question.
"""

from __future__ import annotations

from magi.core.threads.commands import PREFIX, Command, Verb, parse

__all__ = [
    "CHECK_NAME",
    "MARKER",
    "RISKS",
    "command_of",
    "mode_of",
    "question_of",
    "review_question",
    "risk_of",
]

CHECK_NAME = "magi council"
MARKER = "council"  # <!-- magi:council comment=<id> -->: one matrix per command comment
RISKS = ("low", "medium", "high", "critical")
QUESTION_MAX = 20_000  # characters of a question taken from a comment
RESEARCH = "--research"


def command_of(body: str, verb: Verb) -> Command | None:
    """The first ``/magi <verb>`` command of a comment, or None."""
    return next((c for c in parse(body) if c.verb is verb), None)


def question_of(body: str) -> str:
    """What a ``/magi council`` comment asks ("" when it asks nothing)."""
    command = command_of(body, Verb.COUNCIL)
    if command is None:
        return ""
    args = list(command.args)
    if args and args[0].lower() == RESEARCH:
        args = args[1:]
    if args:
        return " ".join(args)[:QUESTION_MAX]
    lines = body.splitlines()
    for i, line in enumerate(lines):
        words = line.split()
        if (
            len(words) >= 2
            and words[0].lower() == PREFIX
            and words[1].lower() == Verb.COUNCIL.value
        ):
            return "\n".join(lines[i + 1 :]).strip()[:QUESTION_MAX]
    return ""


def mode_of(body: str) -> str:
    """``research`` for ``/magi council --research ...``, else ``decision``."""
    command = command_of(body, Verb.COUNCIL)
    if command is not None and command.args and command.args[0].lower() == RESEARCH:
        return "research"
    return "decision"


def risk_of(command: Command) -> str | None:
    """``/magi review high``: the review tier named after the verb, if any."""
    for word in command.args:
        if word.lower() in RISKS:
            return word.lower()
    return None


def review_question(number: int, title: str) -> str:
    """The question a review panel answers about pull request ``number``."""
    title = " ".join(title.split())[:300]
    return (
        f"Review pull request #{number}: {title}\n\n"
        "Should this change be merged as it is? The diff is the evidence."
    )
