"""Scripts for the scripted model (``model_server``): what it answers the real agent CLIs
in a whole magi competition, read from magi's own prompts.

``competition`` implements (a shell tool call that commits a change), judges (codex's seats
choosing another first than the rest, so the panel deliberates), deliberates, votes,
reviews (one blocking finding in the first round, none after) and fixes (a commit, then the
finding's id adopted), each answer in the shape ``magi.core.text.answers`` parses.
``python -m magi.testing.model_scripts`` serves it on 127.0.0.1 in a process of its own
(for a benchmark that must not count the model's CPU as magi's), printing its base URL,
until its stdin closes.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from magi.model.config import AgentConfig
from magi.testing.model_wire import Asked, Provider, Reply, ToolCall

__all__ = ["GIT_ID", "KEYS", "MARK", "competition", "pointed", "prompt_of", "shell"]

KEYS: dict[Provider, str] = {
    "anthropic": "sk-ant-scripted",
    "openai": "sk-scripted-0123456789",
    "gemini": "AIza-scripted",
}
GIT_ID = {
    "GIT_AUTHOR_NAME": "seat",
    "GIT_AUTHOR_EMAIL": "seat@localhost",
    "GIT_COMMITTER_NAME": "seat",
    "GIT_COMMITTER_EMAIL": "seat@localhost",
}


LABEL = re.compile(r"^<<<MATERIAL \S+ ([A-Z])\b", re.M)
CHANGE = (
    "printf '\\n# scripted by {who}\\n' >> textstats.py && git add -A"
    " && git -c user.name=seat -c user.email=seat@localhost commit -qm 'the scripted change'"
    " && echo committed"
)


FIXED = (
    "printf '# (a full stop.)\n' >> textstats.py && git add -A"
    " && git -c user.name=seat -c user.email=seat@localhost commit -qm 'the fix' && echo fixed"
)


def _json(obj: object) -> Reply:
    return Reply(text=f"My answer.\n\n```json\n{json.dumps(obj)}\n```\n")


FOUND = re.compile(r"^### (\S+) \(blocking\)", re.M)
FINDING = {
    "severity": "blocking",
    "title": "Say which CLI wrote the note",
    "file": "textstats.py",
    "detail": "The note should end with a full stop.",
}


def _cli(asked: Asked) -> str:
    """Which CLI asks, by the shell tool it offers."""
    names = {"Bash": "claude", "bash": "opencode", "run_shell_command": "gemini"}
    return next((cli for tool, cli in names.items() if tool in asked.tools), "codex")


# What each CLI writes in its change: a mark that names no vendor (a vendor's name in a
# patch is an author-identifying term, which the judges' leak scan warns about).
MARK = {"claude": "one", "codex": "two", "gemini": "three", "opencode": "four"}


# What a CLI adds to the user's turn beside magi's prompt, which a model reads as context and
# not as the question: claude's and opencode's ``<system-reminder>`` (opencode's plan mode, a
# read-only seat's, sends one AFTER the prompt), gemini's ``<session_context>``.
HARNESS = re.compile(r"^\s*<(system-reminder|session_context)>")
REASK = "Your last reply could not be read as a"


def prompt_of(asked: Asked) -> str:
    """magi's newest prompt in the conversation: the newest user text that is not the
    CLI's own context, and not magi's re-ask (which asks the same question again)."""
    users = [t for r, t in reversed(asked.turns) if r == "user" and not HARNESS.match(t)]
    return next((t for t in users if not t.startswith(REASK)), "")


def competition(asked: Asked) -> Reply:
    """What each of magi's prompts wants, read from the newest prompt; labels from all.
    The first review round finds one blocking thing; the fixer commits a fix for it."""
    role, text = asked.last
    prompt = prompt_of(asked)
    if "# Review findings to address" in prompt:
        if role == "tool":
            return _json({"adopted": FOUND.findall(prompt), "rejected": []})
        return shell(asked, FIXED)
    if role == "tool":
        return Reply(text=f"Changed textstats.py: {text.strip()[-40:]}")
    labels = sorted(set(LABEL.findall("\n".join(t for _, t in asked.turns))))
    if "# Your final vote" in prompt:
        return _json({"vote": labels[0], "rationale": "the first, as argued"})
    if "# Deliberation, round" in prompt:
        return _json({"ranking": labels, "argument": f"{labels[0]} reads best."})
    if "# Blind judging" in prompt:
        # codex's judges put the last first: first choices split, so the panel deliberates.
        ranking = labels[::-1] if _cli(asked) == "codex" else labels
        return _json({"ranking": ranking, "rationale": "all pass; the first reads best"})
    if "# Code review, round 1 of" in prompt:
        return _json({"findings": [FINDING]})
    if "# Code review, round" in prompt:
        return _json({"findings": []})
    return shell(asked, CHANGE.format(who=MARK[_cli(asked)]))


def shell(asked: Asked, command: str) -> Reply:
    """A call of whichever shell tool the CLI offered: claude's Bash, opencode's bash,
    gemini's run_shell_command, or codex's freeform exec (JavaScript calling exec_command)."""
    for name in ("Bash", "bash", "run_shell_command"):
        if name in asked.tools:
            return Reply(tool_calls=(ToolCall(name, {"command": command, "description": "run"}),))
    js = f"const r = await tools.exec_command({{cmd: {json.dumps(command)}}}); text(r.output);"
    return Reply(tool_calls=(ToolCall("exec", js),))


def pointed(kind: str, url: str, home: Path, key: str | None = None) -> AgentConfig:
    """An agent of ``kind`` pointed at the scripted model at ``url`` (its one base URL),
    logged in with ``key`` (default: the one the model accepts), its HOME ``home``."""
    if kind == "gemini":
        # Headless gemini needs the method chosen in settings.json: GOOGLE_GEMINI_BASE_URL
        # alone picks "gateway", which it refuses (docs/agents-verified.md).
        settings = home / ".gemini" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
        env = {"GOOGLE_GEMINI_BASE_URL": url, "GEMINI_API_KEY": key or KEYS["gemini"]}
        return AgentConfig(
            id="gm", kind="gemini", model="gemini-2.5-pro", env={**env, **GIT_ID, "HOME": str(home)}
        )
    if kind == "opencode":
        # Anthropic's API at the model's base URL, through opencode's provider config.
        conf = {"provider": {"anthropic": {"options": {"baseURL": f"{url}/v1"}}}}
        env = {
            "OPENCODE_CONFIG_CONTENT": json.dumps(conf),
            "ANTHROPIC_API_KEY": key or KEYS["anthropic"],
        }
        model_id = "anthropic/claude-sonnet-4-5"
        return AgentConfig(
            id="oc", kind="opencode", model=model_id, env={**env, **GIT_ID, "HOME": str(home)}
        )
    if kind == "claude":
        env = {
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": key or KEYS["anthropic"],
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "IS_SANDBOX": "1",
        }
        return AgentConfig(id="cl", kind="claude", env={**env, **GIT_ID, "HOME": str(home)})
    # The built-in provider at the model's base URL: a WebSocket first, as against OpenAI.
    args = ["-c", f"openai_base_url={json.dumps(url + '/v1')}"]
    env = {"CODEX_API_KEY": key or KEYS["openai"], **GIT_ID, "HOME": str(home)}
    return AgentConfig(id="cx", kind="codex", args=args, env=env)


def main(argv: list[str]) -> int:
    from magi.testing.model_server import ScriptedModel

    keys: dict[Provider, str] = {**KEYS, **(json.loads(argv[0]) if argv else {})}
    with ScriptedModel(competition, keys) as model:
        print(model.url, flush=True)
        sys.stdin.read()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
