"""Shared by the real-CLI tier: where the CLIs are, and how each is pointed at the model."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from magi.model.config import AgentConfig
from magi.testing.model_server import ScriptedModel

BIN = os.environ.get("MAGI_REAL_CLIS", "")
needs_clis = pytest.mark.skipif(
    not BIN or not Path(BIN, "claude").exists() or not Path(BIN, "codex").exists(),
    reason="MAGI_REAL_CLIS names no directory with claude and codex (make test-real)",
)
KEYS = {"anthropic": "sk-ant-scripted", "openai": "sk-scripted-0123456789"}
GIT_ID = {
    "GIT_AUTHOR_NAME": "seat",
    "GIT_AUTHOR_EMAIL": "seat@localhost",
    "GIT_COMMITTER_NAME": "seat",
    "GIT_COMMITTER_EMAIL": "seat@localhost",
}


def agent_config(
    kind: str, model: ScriptedModel, home: Path, key: str | None = None
) -> AgentConfig:
    if kind == "claude":
        env = {
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": key or KEYS["anthropic"],
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "IS_SANDBOX": "1",
        }
        return AgentConfig(id="cl", kind="claude", env={**env, **GIT_ID, "HOME": str(home)})
    # A provider of its own: the model's one base URL, and no WebSocket (codex would try one
    # seven times before falling back to HTTPS).
    provider = {
        "name": '"scripted"',
        "base_url": json.dumps(f"{model.url}/v1"),
        "wire_api": '"responses"',
        "supports_websockets": "false",
        "env_key": '"CODEX_API_KEY"',
    }
    args = ["-c", 'model_provider="scripted"']
    for k, v in provider.items():
        args += ["-c", f"model_providers.scripted.{k}={v}"]
    env = {"CODEX_API_KEY": key or KEYS["openai"], **GIT_ID, "HOME": str(home)}
    return AgentConfig(id="cx", kind="codex", args=args, env=env)
