"""Which comment lines are /magi commands, and the replies to unknown and refused ones."""

from __future__ import annotations

import pytest

from magi.core.threads.commands import Verb, help_text, parse, refused_reply, unknown_reply


@pytest.mark.parametrize("verb", list(Verb))
def test_each_known_verb_on_its_own_line_is_a_command(verb: Verb) -> None:
    """Every known verb parses, whatever the case and surrounding whitespace."""
    (cmd,) = parse(f"thanks!\n  /MAGI {verb.value.upper()}  \n")
    assert cmd.verb is verb


@pytest.mark.parametrize(
    "body",
    [
        "please run /magi retry later",
        "> /magi stop",
        "```\n/magi stop\n```",
        "~~~\n/magi fold\n~~~",
        "    /magi stop",
        "/magic retry",
        "",
    ],
)
def test_commands_in_prose_quotes_and_code_are_not_commands(body: str) -> None:
    """A command quoted, fenced, indented as code or inside a sentence never runs."""
    assert parse(body) == []


def test_unknown_verb_is_a_command_with_no_verb_and_the_reply_lists_the_verbs() -> None:
    """`/magi deploy` is a command magi does not know; the reply quotes it and lists all."""
    (cmd,) = parse("/magi deploy now")
    assert cmd.verb is None
    reply = unknown_reply(cmd)
    assert "> /magi deploy now\n" in reply
    assert all(f"`{v.value}`" in reply for v in Verb)
    assert "<details>" in reply
    assert help_text() in reply


def test_bare_magi_is_unknown() -> None:
    """`/magi` alone asks for help."""
    assert [c.verb for c in parse("/magi")] == [None]


def test_several_commands_keep_their_order_and_args() -> None:
    """Each line is its own command, with the words after the verb."""
    cmds = parse("/magi status\n/magi retry run-1")
    assert [(c.verb, c.args) for c in cmds] == [(Verb.STATUS, ()), (Verb.RETRY, ("run-1",))]


def test_refused_reply_quotes_the_command_and_says_why() -> None:
    """A refusal quotes the line and gives the reason."""
    (cmd,) = parse("/magi stop")
    reply = refused_reply(cmd, "no run on this issue")
    assert reply.startswith("> /magi stop\n")
    assert "no run on this issue" in reply
