"""The competition script of the scripted model: it answers the question magi asked, read
past what each CLI adds to the user's turn (seen in the real CLIs' requests, tests/real)."""

from __future__ import annotations

import json

from magi.testing.model_scripts import competition
from magi.testing.model_wire import anthropic_asked, gemini_asked

JUDGE = "# Blind judging\n\nRank them.\n\n<<<MATERIAL patch A\nx\nMATERIAL>>>\n"
PLAN = "<system-reminder>\n# Plan Mode - System Reminder\n\nCRITICAL: Plan mode ACTIVE\n"
OPENCODE_READ_ONLY = ("glob", "grep", "read", "skill", "task", "todowrite")


def answered(text: str) -> dict[str, object]:
    block = text.split("```json\n", 1)[1].split("\n```", 1)[0]
    return dict(json.loads(block))


def opencode(messages: list[dict[str, object]]) -> dict[str, object]:
    tools = [{"name": n, "input_schema": {}} for n in OPENCODE_READ_ONLY]
    return {"model": "claude-sonnet-4-5", "messages": messages, "tools": tools, "stream": True}


def test_opencode_plan_modes_reminder_after_the_prompt_is_not_the_question() -> None:
    """opencode's read-only agent (plan) sends its reminder as a text block AFTER magi's
    judge prompt; the script used to take the reminder for the task, call a shell tool the
    judge does not have, and the judge's answer was lost."""
    content = [{"type": "text", "text": JUDGE}, {"type": "text", "text": PLAN}]
    reply = competition(anthropic_asked(opencode([{"role": "user", "content": content}])))
    assert reply.tool_calls == ()
    assert answered(reply.text)["ranking"] == ["A"]


def test_magis_reask_is_answered_as_the_question_it_repeats() -> None:
    reask = "Your last reply could not be read as a judge answer: no ```json block in the reply."
    messages = [
        {"role": "user", "content": [{"type": "text", "text": JUDGE}]},
        {"role": "assistant", "content": [{"type": "text", "text": "hm"}]},
        {
            "role": "user",
            "content": [{"type": "text", "text": reask}, {"type": "text", "text": PLAN}],
        },
    ]
    reply = competition(anthropic_asked(opencode(messages)))
    assert answered(reply.text)["ranking"] == ["A"]


def test_geminis_session_context_is_not_the_question() -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "<session_context>\nThis is the Gemini CLI."}]},
            {"role": "user", "parts": [{"text": "# Your final vote\n\nVote.\n" + JUDGE}]},
        ],
        "tools": [{"functionDeclarations": [{"name": "run_shell_command"}]}],
    }
    reply = competition(gemini_asked("gemini-2.5-pro", True, body))
    assert answered(reply.text)["vote"] == "A"
