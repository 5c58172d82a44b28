"""Comment commands: which lines of a comment are ``/magi ...`` commands, and what to reply.

A command is a line of its own that starts with ``/magi`` (leading whitespace allowed),
outside a quote (``>``) and outside a fenced code block, so quoting someone else's command
or showing one in an example never runs it. Anything after ``/magi`` that is not a known
verb is an unknown command and gets the list back: a silently ignored command is the top
complaint about other bots.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from magi.core.threads.posting import inert

PREFIX = "/magi"
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


class Verb(enum.Enum):
    """The commands magi knows."""

    RETRY = "retry"
    STOP = "stop"
    FOLD = "fold"
    STATUS = "status"
    STATS = "stats"
    COUNCIL = "council"
    REVIEW = "review"
    ANSWER = "answer"


HELP: dict[Verb, str] = {
    Verb.RETRY: "re-dispatch a stalled or failed run from its record",
    Verb.STOP: "park the run at its next node boundary (the seats at work finish their turn; "
    "a run the App cannot reach is cancelled); `/magi stop now` cancels it at once. Either "
    "way `/magi retry` carries it on",
    Verb.FOLD: "remove a finished run's candidate branches",
    Verb.STATUS: "reply with where the run is",
    Verb.STATS: "reply with the figures over the repository's run records",
    Verb.COUNCIL: "`/magi council <question>`: put a question to the blind, weighted panel "
    "(`/magi council --research <question>`: findings, cross-checked)",
    Verb.REVIEW: "a review panel on this pull request's diff (`/magi review high`: the tier)",
    Verb.ANSWER: "`/magi answer [ID] <choice or words>`: answer the question an agent of the "
    "run asked; only that seat carries on",
}


@dataclass(frozen=True)
class Command:
    """One command line: its verb (None when unknown), the words after it, the line as written."""

    verb: Verb | None
    args: tuple[str, ...]
    line: str


def _lines_outside_quotes_and_code(body: str) -> list[str]:
    lines: list[str] = []
    fenced = False
    for line in body.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or line.lstrip().startswith(">") or line.startswith(("    ", "\t")):
            continue
        lines.append(line.strip())
    return lines


def parse(body: str) -> list[Command]:
    """Every command in ``body``, in order; an empty list when the comment is not a command."""
    found: list[Command] = []
    for line in _lines_outside_quotes_and_code(body):
        words = line.split()
        if not words or words[0].lower() != PREFIX:
            continue
        verb: Verb | None = None
        if len(words) > 1:
            try:
                verb = Verb(words[1].lower())
            except ValueError:
                verb = None
        found.append(Command(verb, tuple(words[2:]), line))
    return found


def words_of(command: Command) -> str:
    """What follows the verb on the command's line, as written (``/magi answer Use Redis``)."""
    parts = command.line.split(maxsplit=2)
    return parts[2] if len(parts) > 2 else ""


# Without a receiver nothing can answer a run's question whether to park: stop cancels.
_STOP_SERVERLESS = (
    "cancel the run (the seats at work are ended; without a receiver nothing can park it); "
    "`/magi retry` carries it on"
)


def help_text(serverless: bool = False) -> str:
    """The full help, as a markdown list (``serverless``: as the workflow's receive job,
    without a receiver, does each command)."""
    said = {**HELP, Verb.STOP: _STOP_SERVERLESS} if serverless else HELP
    return "\n".join(f"- `{PREFIX} {v.value}`: {text}" for v, text in said.items())


def _quote(line: str) -> str:
    """The command as its writer wrote it, inert (``core.threads.posting.inert``): a quoted line is
    somebody else's words, and a code span would still carry a marker in the raw body."""
    return f"> {inert(line)}"


def unknown_reply(command: Command, serverless: bool = False) -> str:
    """The short reply to a ``/magi ...`` line that is not a known command."""
    verbs = ", ".join(f"`{v.value}`" for v in Verb)
    return (
        f"{_quote(command.line)}\n\n"
        f"magi does not know this command. Known: {verbs}, each on a line of its own.\n\n"
        f"<details><summary>Help</summary>\n\n{help_text(serverless)}\n\n</details>"
    )


def refused_reply(command: Command, why: str) -> str:
    """The reply to a known command magi will not run, quoting it and saying why."""
    return f"{_quote(command.line)}\n\nmagi did not run this: {why}"


def strangers_reply(command: Command, login: str, permission: str) -> str:
    """The one reply a person without write access gets on a thread, whatever they send."""
    return (
        f"{_quote(command.line)}\n\nmagi did not run this: {writers_only(login, permission)} "
        "magi says this once per person on a thread and answers nothing more from you here."
    )


def writers_only(login: str, permission: str) -> str:
    """Why a command or an approval from someone without write access is refused."""
    return (
        f"@{login} has `{permission}` permission here; only people with write, maintain or "
        "admin permission on this repository may do this."
    )
