"""A stand-in agent CLI: logs how it was called and answers in one real CLI's output shape.

This file is copied, behind a shebang, next to a ``<name>.json`` config by
``magi.testing.standins``; it is a script, stdlib only, and never imported by magi itself.
Config keys: ``kind`` (claude, codex, opencode, gemini, antigravity, command), ``mode``
(ok, quota, error, malformed, hang, flood, linger, offline, logged_out), ``reply``,
``session_id`` (the id a CLI that chooses its own reports), ``flood_bytes``,
``ignore_term``, ``strict_sessions``, ``logged_in`` (what the status command says),
``delay`` and ``signal_every`` (seconds, for ``offline``), and ``before``: a shell script
run (``/bin/sh -c``) at the start of every turn, before the answer, with the turn's
environment and cwd (a hostile CLI's doings, a login it rewrites).

``offline`` is each real CLI without a network, as recorded in docs/agents-verified.md:
codex and gemini retry forever, printing their reconnect lines every ``signal_every``
seconds; claude and opencode are silent for ``delay`` seconds, then print their connection
error and exit 1. ``logged_out`` is a turn of a CLI that is not logged in. The status
commands (``claude auth status``, ``codex login status``, ``opencode auth list``) print the
real CLIs' recorded output and exit codes for ``logged_in``.
Each call appends one JSON line (argv, cwd, stdin, env, pid) to ``$MAGI_STANDIN_LOG`` or
``<name>.log.jsonl``; ``hang`` and ``linger`` write "<own pid> <grandchild pid>" to
``<name>.pids``. Output shapes follow /work/shared/agents/README.md.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

HERE = Path(os.path.realpath(__file__))
sys.path.insert(0, str(HERE.parent))  # standin_offline.py is written beside this script
SLEEPER = "import time\nwhile True:\n    time.sleep(3600)\n"
Out = tuple[str, str, int]  # stdout, stderr, exit code


def sidecar(suffix: str) -> Path:
    return HERE.with_name(HERE.name + suffix)


def after(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv[:-1] else None


def requested(kind: str, argv: list[str]) -> tuple[str | None, str | None]:
    """(id the caller asks to open, id the caller asks to resume) for this CLI's flags."""
    if kind in ("claude", "gemini"):
        return after(argv, "--session-id"), after(argv, "--resume")
    if kind == "codex":
        return None, after(argv, "resume")
    if kind == "opencode":
        return None, after(argv, "-s")
    if kind == "antigravity":
        return None, after(argv, "--conversation")
    return None, os.environ.get("MAGI_SESSION") or None


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def claude(mode: str, sid: str, reply: str) -> Out:
    usage = {
        "input_tokens": 100,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 50,
        "output_tokens": 20,
        "service_tier": "standard",
    }
    base = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "api_error_status": None,
        "duration_ms": 1200,
        "duration_api_ms": 1100,
        "num_turns": 1,
        "result": reply,
        "stop_reason": "end_turn",
        "session_id": sid,
        "total_cost_usd": 0.0123,
        "usage": usage,
        "modelUsage": {},
        "permission_denials": [],
        "uuid": str(uuid.uuid4()),
    }
    if mode == "quota":
        base.update(
            is_error=True,
            api_error_status=429,
            result="You've hit your session limit · resets 5am (UTC)",
        )
        return dumps(base) + "\n", "", 1
    if mode == "error":
        del base["result"]
        base.update(subtype="error_during_execution", is_error=True, errors=["tool crashed"])
        return dumps(base) + "\n", "", 1
    return dumps(base) + "\n", "", 0


def codex(mode: str, sid: str, reply: str) -> Out:
    lines: list[Any] = [{"type": "thread.started", "thread_id": sid}, {"type": "turn.started"}]
    if mode in ("quota", "error"):
        msg = (
            "You’ve hit your usage limit. Upgrade to Plus to continue using Codex."
            if mode == "quota"
            else "stream disconnected before completion"
        )
        lines += [
            {"type": "error", "message": msg},
            {"type": "turn.failed", "error": {"message": msg}},
        ]
        return "".join(dumps(x) + "\n" for x in lines), "", 1
    lines += [
        {"type": "item.completed", "item": {"id": "item_0", "type": "reasoning", "text": "hmm"}},
        {
            "type": "item.completed",
            "item": {"id": "item_1", "type": "agent_message", "text": "Looking."},
        },
        {
            "type": "item.completed",
            "item": {"id": "item_2", "type": "agent_message", "text": reply},
        },
        {
            "type": "turn.completed",
            "usage": {
                "input_tokens": 100,
                "cached_input_tokens": 50,
                "output_tokens": 20,
                "reasoning_output_tokens": 5,
            },
        },
    ]
    return "".join(dumps(x) + "\n" for x in lines), "Reading additional input from stdin...\n", 0


def opencode(mode: str, sid: str, reply: str) -> Out:
    def ev(kind: str, **rest: Any) -> dict[str, Any]:
        return {"type": kind, "timestamp": 1764400000000, "sessionID": sid, **rest}

    def finish(reason: str) -> dict[str, Any]:
        tokens = {"input": 50, "output": 10, "reasoning": 0, "cache": {"read": 25, "write": 0}}
        return ev(
            "step_finish",
            part={"type": "step-finish", "reason": reason, "cost": 0.01, "tokens": tokens},
        )

    lines = [ev("step_start", part={"type": "step-start"})]
    if mode in ("quota", "error"):
        msg = "Quota exceeded. Check your plan and billing details." if mode == "quota" else "boom"
        lines.append(ev("error", error={"name": "APIError", "data": {"message": msg}}))
        return "".join(dumps(x) + "\n" for x in lines), "", 1
    lines += [
        ev("text", part={"type": "text", "text": "Let me look."}),
        ev("tool_use", part={"tool": "read", "callID": "c1", "state": {"status": "completed"}}),
        finish("tool-calls"),
        ev("step_start", part={"type": "step-start"}),
        ev("text", part={"type": "text", "text": reply}),
        finish("stop"),
    ]
    return "".join(dumps(x) + "\n" for x in lines), "", 0


def gemini(mode: str, sid: str, reply: str) -> Out:
    if mode in ("quota", "error"):
        code = 429 if mode == "quota" else 41
        err = {"type": "FatalAuthenticationError", "code": code, "message": "No credentials"}
        if mode == "quota":
            msg = "You have exhausted your daily quota on this model."
            err = {"type": "TerminalQuotaError", "code": code, "message": msg}
        # Fatal errors: JSON on stderr, nothing on stdout; a 429 exits 429 % 256 (inferred).
        return "", json.dumps({"session_id": sid, "error": err}, indent=2), code % 256
    tokens = {
        "input": 80,
        "prompt": 100,
        "candidates": 20,
        "total": 120,
        "cached": 20,
        "thoughts": 0,
        "tool": 0,
    }
    stats = {"models": {"gemini-2.5-pro": {"api": {"totalRequests": 1}, "tokens": tokens}}}
    return json.dumps({"session_id": sid, "response": reply, "stats": stats}, indent=2), "", 0


def antigravity(mode: str, sid: str, reply: str) -> Out:
    if mode == "quota":
        return "", "Error: RESOURCE_EXHAUSTED (429): quota exceeded, resets in 5 hours\n", 1
    if mode == "error":
        return "", "Error: agent failed to start\n", 1
    return dumps({"conversation_id": sid, "response": reply}) + "\n", "", 0


def command(mode: str, sid: str, reply: str) -> Out:
    if mode == "quota":
        return "", "rate limit reached, try later\n", 75
    if mode == "error":
        return "", "command failed\n", 2
    return reply + "\n", f"working...\nMAGI-SESSION: {sid}\n", 0


SHAPES = {f.__name__: f for f in (claude, codex, opencode, gemini, antigravity, command)}
UNKNOWN_SESSION: dict[str, Out] = {
    "claude": ("", "No conversation found with session ID: {id}\n", 1),
    "codex": ("", "Error: thread/resume failed: no rollout found for thread id {id}\n", 1),
    "opencode": ("", "Error: Session not found\n", 1),
    "gemini": ("", '{"error": {"type": "Error", "message": "No session {id}", "code": 42}}', 42),
    "antigravity": ("", "Error: conversation {id} not found\n", 1),
}
MALFORMED = {"codex": "not json at all\n", "opencode": "Error: something odd\n"}


def spawn_sleeper(pid_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", SLEEPER])
    pid_path.write_text(f"{os.getpid()} {child.pid}\n")


def main() -> int:
    cfg: dict[str, Any] = json.loads(sidecar(".json").read_text())
    kind, mode = str(cfg["kind"]), str(cfg.get("mode", "ok"))
    if cfg.get("ignore_term"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    stdin = sys.stdin.buffer.read().decode("utf-8", "replace") if not sys.stdin.isatty() else ""
    pfile = os.environ.get("MAGI_PROMPT_FILE")
    record = {
        "argv": sys.argv,
        "cwd": os.getcwd(),
        "stdin": stdin,
        "env": dict(os.environ),
        "pid": os.getpid(),
        "prompt_file_text": Path(pfile).read_text() if pfile and Path(pfile).is_file() else None,
    }
    log = Path(os.environ.get("MAGI_STANDIN_LOG") or sidecar(".log.jsonl"))
    with log.open("a", encoding="utf-8") as f:
        f.write(dumps(record) + "\n")
    if TYPE_CHECKING:
        from magi.testing import standin_offline as offline_cli
    else:  # the copy beside this script: stand-ins run without magi on their path
        import standin_offline as offline_cli

    if sys.argv[1:] == ["--version"] and kind in offline_cli.VERSION:
        sys.stdout.write(offline_cli.VERSION[kind])
        return 0
    if sys.argv[1:] == offline_cli.STATUS_ARGV.get(kind):
        out, err, code = offline_cli.STATUS[kind, bool(cfg.get("logged_in", True))]
        sys.stdout.write(out)
        sys.stderr.write(err)
        return code

    if cfg.get("before"):
        script = ["/bin/sh", "-c", str(cfg["before"])]
        subprocess.run(script, check=False, stdin=subprocess.DEVNULL, stdout=sys.stderr.fileno())
    to_open, to_resume = requested(kind, sys.argv[1:])
    store = sidecar(".sessions.json")
    known: list[str] = json.loads(store.read_text()) if store.exists() else []
    if (
        to_resume
        and kind != "command"
        and cfg.get("strict_sessions", True)
        and to_resume not in known
    ):
        out, err, code = UNKNOWN_SESSION[kind]
        sys.stderr.write(err.replace("{id}", to_resume))
        return code
    default_sid = cfg.get("session_id") or f"{'ses_' if kind == 'opencode' else ''}{uuid.uuid4()}"
    sid = to_resume or to_open or str(default_sid)
    store.write_text(json.dumps(sorted({*known, sid})))

    if mode == "hang":
        spawn_sleeper(sidecar(".pids"))
        while True:
            time.sleep(3600)
    if mode == "flood":
        n = int(cfg.get("flood_bytes", 1_000_000))
        sys.stdout.write("x" * n)
        sys.stderr.write("e" * n)
        return 0
    if mode in ("offline", "logged_out"):
        if mode == "offline":
            out, err, code = offline_cli.offline(kind, sid, cfg, claude("ok", sid, "")[0])
        else:
            out, err, code = offline_cli.logged_out(kind, sid, claude("ok", sid, "")[0])
        sys.stdout.write(out)
        sys.stderr.write(err)
        return code
    if mode == "malformed":
        sys.stdout.write(MALFORMED.get(kind, '{"type": "result", "session_id": "trunc'))
        return 0
    out, err, code = SHAPES[kind](
        "ok" if mode == "linger" else mode, sid, str(cfg.get("reply", ""))
    )
    sys.stdout.write(out)
    sys.stderr.write(err)
    sys.stdout.flush()
    if mode == "linger":  # leave a child behind, holding stdout open, as a sloppy CLI would
        spawn_sleeper(sidecar(".pids"))
    return code


if __name__ == "__main__":
    sys.exit(main())
