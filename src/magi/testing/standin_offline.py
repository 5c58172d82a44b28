"""The stand-in CLIs offline and logged out: the real CLIs' recorded status output and failures.

Written beside ``standin_cli.py`` (which imports it) by ``magi.testing.standins``; stdlib
only. Every text marked recorded is what the real CLI printed, offline, in
docs/agents-verified.md; the rest is marked unverified.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

Out = tuple[str, str, int]  # stdout, stderr, exit code


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


CODEX_WARNING = (
    "WARNING: proceeding, even though we could not create PATH aliases: Refusing to create "
    'helper binaries under temporary dir "/tmp" (codex_home: AbsolutePathBuf("/tmp/h/.codex"))\n'
)
OPENCODE_LIST = (
    "\u250c  Credentials \x1b[90m~/.local/share/opencode/auth.json\n\u2502\n{creds}"
    "\u2514  {n} credentials\n\n"
)
# Recorded from claude 2.1.197, codex-cli 0.171.0 and opencode 1.18.33 (HOME in /tmp).
STATUS: dict[tuple[str, bool], Out] = {
    ("claude", False): (
        '{\n  "loggedIn": false,\n  "authMethod": "none",\n  "apiProvider": "firstParty"\n}\n',
        "",
        1,
    ),
    ("claude", True): (
        '{\n  "loggedIn": true,\n  "authMethod": "api_key",\n  "apiProvider": "firstParty",\n'
        '  "apiKeySource": "ANTHROPIC_API_KEY"\n}\n',
        "",
        0,
    ),
    ("codex", False): ("", CODEX_WARNING + "Not logged in\n", 1),
    ("codex", True): (
        "",
        CODEX_WARNING + "API key configured - sk-dummy***23456\n"
        "Authentication is checked when you send a request.\n",
        0,
    ),
    ("opencode", False): (OPENCODE_LIST.format(creds="", n=0), "\x1b[0m\n", 0),
    ("opencode", True): (
        OPENCODE_LIST.format(creds="\u25cf  Anthropic \x1b[90mapi\n\u2502\n", n=1),
        "\x1b[0m\n",
        0,
    ),
}
VERSION = {  # `<cli> --version`, recorded
    "claude": "2.1.197 (Claude Code)\n",
    "codex": "codex-cli 0.171.0\n",
    "opencode": "1.18.33\n",
    "gemini": "0.61.0\n",
}
STATUS_ARGV = {
    "claude": ["auth", "status"],
    "codex": ["login", "status"],
    "opencode": ["auth", "list"],
}
GEMINI_RETRY = (
    "Attempt {n} failed. Retrying with backoff... Error: exception TypeError: fetch failed "
    "sending request\n    at async retryWithBackoff (file:///gemini/bundle/chunk.js:308039:23)\n"
)
CODEX_RECONNECT = "Reconnecting... waiting for network (Connection failed: error sending request)"


def offline(kind: str, sid: str, cfg: dict[str, Any], claude_ok: str) -> Out:
    """The real CLI without a network: retries forever, or an error after a delay."""
    every = float(cfg.get("signal_every", 0.1))
    if kind == "codex":
        for line in ({"type": "thread.started", "thread_id": sid}, {"type": "turn.started"}):
            print(dumps(line), flush=True)
        while True:
            print(dumps({"type": "error", "message": CODEX_RECONNECT}), flush=True)
            time.sleep(every)
    if kind == "gemini":
        n = 0
        while True:
            n += 1
            sys.stderr.write(GEMINI_RETRY.format(n=n))
            sys.stderr.flush()
            time.sleep(every)
    time.sleep(float(cfg.get("delay", 0.3)))
    if kind == "claude":
        obj = json.loads(claude_ok)
        obj.update(is_error=True, result="API Error: Unable to connect to API (ConnectionRefused)")
        return dumps(obj) + "\n", "", 1
    if kind == "opencode":
        msg = "Cannot connect to API: Unable to connect. Is the computer able to access the url?"
        err = {"name": "APIError", "data": {"message": msg, "isRetryable": True}}
        ev = {"type": "error", "timestamp": 1764400000000, "sessionID": sid, "error": err}
        return dumps(ev) + "\n", "", 1
    return "", "Error: fetch failed (ENOTFOUND)\n", 1


def logged_out(kind: str, sid: str, claude_ok: str) -> Out:
    """A turn of a CLI that is not logged in (codex and opencode: unverified wording)."""
    if kind == "claude":  # recorded from claude 2.1.197
        obj = json.loads(claude_ok)
        obj.update(is_error=True, result="Not logged in · Please run /login")
        return dumps(obj) + "\n", "", 1
    if kind == "gemini":  # recorded from gemini 0.61.0
        msg = (
            "Please set an Auth method in your /tmp/h/.gemini/settings.json or specify one of "
            "the following environment variables before running: GEMINI_API_KEY, "
            "GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA"
        )
        err = {"type": "Error", "message": msg, "code": 41}
        return "", json.dumps({"session_id": sid, "error": err}, indent=2), 41
    if kind == "codex":
        msg = "unexpected status 401 Unauthorized: Missing bearer or basic authentication"
        lines = [
            {"type": "thread.started", "thread_id": sid},
            {"type": "error", "message": msg},
            {"type": "turn.failed", "error": {"message": msg}},
        ]
        return "".join(dumps(x) + "\n" for x in lines), "", 1
    if kind == "opencode":
        err = {"name": "ProviderAuthError", "data": {"providerID": "anthropic", "message": "401"}}
        ev = {"type": "error", "timestamp": 1764400000000, "sessionID": sid, "error": err}
        return dumps(ev) + "\n", "", 1
    return "", "Error: not logged in\n", 1
