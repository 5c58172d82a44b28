"""The adapter contract for CLI kinds, and `CliAgent`, which joins an adapter to the runner.

An adapter is two pure functions: ``build`` turns a request into an `Invocation` (argv,
stdin, extra environment), ``parse`` turns what the process printed into `Parsed` fields.
Everything with side effects (minting a session id, writing a prompt file, spawning the
process, timing it) happens here, once, for every kind.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from magi.agents import process
from magi.agents.base import TurnRequest, TurnResult, TurnStatus, Usage
from magi.config.model import AgentConfig
from magi.errors import AgentError


@dataclass(frozen=True)
class Invocation:
    """How to start one turn's process."""

    argv: list[str]
    stdin: bytes | None
    extra_env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Parsed:
    """The `TurnResult` fields an adapter reads from a process's output."""

    status: TurnStatus
    text: str = ""
    session_id: str | None = None
    usage: Usage = field(default_factory=Usage)
    error: str | None = None


class Adapter(Protocol):
    """One CLI kind's pure half. ``mints_session``: magi chooses the id of a new session."""

    mints_session: ClassVar[bool]
    needs_prompt_file: ClassVar[bool]

    def build(self, request: TurnRequest, session_id_to_open: str | None) -> Invocation: ...

    def parse(
        self, stdout: str, stderr: str, exit_code: int | None, request: TurnRequest
    ) -> Parsed: ...


def turn_vars(request: TurnRequest) -> dict[str, str]:
    """The MAGI_* variables every agent process gets for its turn."""
    env = {
        "MAGI_SEAT": request.seat,
        "MAGI_TURN": str(request.turn),
        "MAGI_ALLOW_WRITE": "1" if request.allow_write else "0",
        "MAGI_RUN": request.run_id,
        "MAGI_NODE": request.node,
        "MAGI_LABEL": request.label,
        "MAGI_SESSION": request.session_id or "",
    }
    if request.prompt_file is not None:
        env["MAGI_PROMPT_FILE"] = str(request.prompt_file)
    return env


def executable(cfg: AgentConfig, default: str) -> list[str]:
    """``command`` from the config replaces the CLI's own name (and may add leading args)."""
    return list(cfg.command) if cfg.command else [default]


def tail(text: str, limit: int = 300) -> str:
    """The last non-empty line(s) of ``text``, short enough for a one-line error."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    out = " | ".join(lines[-3:])
    return out if len(out) <= limit else "…" + out[-limit:]


def malformed(kind: str, why: str, stdout: str) -> Parsed:
    head = stdout.strip()[:120]
    return Parsed(
        TurnStatus.ERROR, error=f"{kind}: malformed output ({why}); stdout began {head!r}"
    )


def no_events(
    kind: str, stdout: str, stderr: str, exit_code: int | None, quota: re.Pattern[str]
) -> Parsed:
    """A JSONL CLI that printed no event: malformed output, or a failure stderr explains."""
    if exit_code == 0 or not stderr.strip():
        return malformed(kind, "no JSON events", stdout)
    status = TurnStatus.QUOTA if quota.search(stderr) else TurnStatus.ERROR
    return Parsed(status, error=f"{kind} exited {exit_code}: {tail(stderr)}")


def json_lines(stdout: str) -> list[dict[str, Any]]:
    """Every line of ``stdout`` that is a JSON object; other lines (banners, logs) are skipped."""
    events = []
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            events.append(obj)
    return events


def json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (which may be pretty-printed, after other lines)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            obj, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict):
            return obj
        start = text.find("{", start + 1)
    return None


def int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class CliAgent:
    """An `Agent` that runs one CLI kind through the shared process runner."""

    def __init__(
        self,
        cfg: AgentConfig,
        adapter: Adapter,
        *,
        output_max_bytes: int = 4_000_000,
        kill_grace: float = 5.0,
    ) -> None:
        self.id = cfg.id
        self.kind = cfg.kind
        self.cfg = cfg
        self.adapter = adapter
        self.output_max_bytes = output_max_bytes
        self.kill_grace = kill_grace

    def run_turn(self, request: TurnRequest) -> TurnResult:
        temp_prompt: Path | None = None
        if self.adapter.needs_prompt_file and request.prompt_file is None:
            fd, name = tempfile.mkstemp(prefix="magi-prompt-", suffix=".md")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(request.prompt)
            temp_prompt = Path(name)
            request = dataclasses.replace(request, prompt_file=temp_prompt)
        try:
            return self._run(request)
        finally:
            if temp_prompt is not None:
                temp_prompt.unlink(missing_ok=True)

    def _run(self, request: TurnRequest) -> TurnResult:
        to_open = None
        if self.adapter.mints_session and request.session_id is None:
            to_open = str(uuid.uuid4())
        try:
            inv = self.adapter.build(request, to_open)
        except AgentError as e:
            return TurnResult(TurnStatus.ERROR, error=str(e))
        env = process.child_env(request.environ, self.cfg, {**turn_vars(request), **inv.extra_env})
        res = process.run(
            inv.argv,
            cwd=request.cwd,
            stdin=inv.stdin,
            env=env,
            timeout=request.timeout,
            output_max_bytes=self.output_max_bytes,
            kill_grace=self.kill_grace,
            cancel=request.cancel,
        )
        if res.start_error is not None:
            return TurnResult(
                TurnStatus.ERROR, error=f"{self.id}: {res.start_error}", duration_s=res.duration_s
            )
        parsed = self.adapter.parse(res.stdout, res.stderr, res.exit_code, request)
        status, text, error = parsed.status, parsed.text, parsed.error
        if res.timed_out:
            # Whatever was printed before the kill is not a reply; the session may still live.
            status, text = TurnStatus.TIMEOUT, ""
            error = f"no reply within {request.timeout:g} s; the process group was killed"
        elif status is not TurnStatus.OK and res.truncated:
            error = f"{error} (output exceeded {self.output_max_bytes} bytes and was truncated)"
        return TurnResult(
            status=status,
            text=text,
            session_id=parsed.session_id,
            usage=parsed.usage,
            duration_s=res.duration_s,
            error=error,
            raw_stdout=res.stdout,
            raw_stderr=res.stderr,
            exit_code=res.exit_code,
        )
