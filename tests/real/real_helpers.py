"""Shared by the real-CLI tier: where the CLIs are, and how each is pointed at the model."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from magi.model.config import AgentConfig
from magi.testing.model_server import ScriptedModel
from magi.testing.model_wire import Asked, Reply, ToolCall

BIN = os.environ.get("MAGI_REAL_CLIS", "")
CLIS = ("claude", "codex", "gemini", "opencode")
needs_clis = pytest.mark.skipif(
    not BIN or not all(Path(BIN, name).exists() for name in CLIS),
    reason=f"MAGI_REAL_CLIS names no directory with {', '.join(CLIS)} (make test-real)",
)


def shell(asked: Asked, command: str) -> Reply:
    """A call of whichever shell tool the CLI offered: claude's Bash, opencode's bash,
    gemini's run_shell_command, or codex's freeform exec (JavaScript calling exec_command)."""
    for name in ("Bash", "bash", "run_shell_command"):
        if name in asked.tools:
            return Reply(tool_calls=(ToolCall(name, {"command": command, "description": "run"}),))
    js = f"const r = await tools.exec_command({{cmd: {json.dumps(command)}}}); text(r.output);"
    return Reply(tool_calls=(ToolCall("exec", js),))


KEYS = {
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


def agent_config(
    kind: str, model: ScriptedModel, home: Path, key: str | None = None
) -> AgentConfig:
    if kind == "gemini":
        # Headless gemini needs the method chosen in settings.json: GOOGLE_GEMINI_BASE_URL
        # alone picks "gateway", which it refuses (docs/agents-verified.md).
        settings = home / ".gemini" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
        env = {"GOOGLE_GEMINI_BASE_URL": model.url, "GEMINI_API_KEY": key or KEYS["gemini"]}
        return AgentConfig(
            id="gm", kind="gemini", model="gemini-2.5-pro", env={**env, **GIT_ID, "HOME": str(home)}
        )
    if kind == "opencode":
        # Anthropic's API at the model's base URL, through opencode's provider config.
        conf = {"provider": {"anthropic": {"options": {"baseURL": f"{model.url}/v1"}}}}
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
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": key or KEYS["anthropic"],
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "IS_SANDBOX": "1",
        }
        return AgentConfig(id="cl", kind="claude", env={**env, **GIT_ID, "HOME": str(home)})
    # The built-in provider at the model's base URL: a WebSocket first, as against OpenAI.
    args = ["-c", f"openai_base_url={json.dumps(model.url + '/v1')}"]
    env = {"CODEX_API_KEY": key or KEYS["openai"], **GIT_ID, "HOME": str(home)}
    return AgentConfig(id="cx", kind="codex", args=args, env=env)
