"""The adapter contract for CLI kinds, and `CliAgent`, which joins an adapter to the runner.

An adapter is two pure functions: ``build`` turns a request into an `Invocation` (argv,
stdin, extra environment), ``parse`` turns what the process printed into `Parsed` fields.
Everything with side effects (minting a session id, writing a prompt file, spawning the
process, timing it) happens here, once, for every kind.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import ClassVar, Protocol

from magi.agents import process
from magi.agents.base import Failure, TurnRequest, TurnResult, TurnStatus, Usage
from magi.agents.live import LiveLine, Signals, SignalWatch, scrub
from magi.agents.programs import program_paths
from magi.core.seats.jail import bwrap_argv
from magi.errors import AgentError
from magi.model.config import AgentConfig


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
    failure: Failure | None = None  # when the adapter knows; else read from ``error``
    session_total: Usage | None = None  # the CLI's running total, when it reports one


class Adapter(Protocol):
    """One CLI kind's pure half. ``mints_session``: magi chooses the id of a new session.

    ``signals`` name the CLI's cannot-reach and not-logged-in lines; ``live`` reads one line
    of its output while it runs (what to show a person, and whether it is progress).
    """

    mints_session: ClassVar[bool]
    needs_prompt_file: ClassVar[bool]
    signals: ClassVar[Signals]

    def live(self, line: str) -> LiveLine: ...

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
    if request.state_dir is not None:
        env["MAGI_STATE_DIR"] = str(request.state_dir)
    return env


def executable(cfg: AgentConfig, default: str) -> list[str]:
    """``command`` from the config replaces the CLI's own name (and may add leading args)."""
    return list(cfg.command) if cfg.command else [default]


# A JavaScript CLI that throws prints the error's line, then its stack ("at ..."), then
# "Node.js v20..." (codex.js without its platform package: "Error: Missing optional
# dependency @openai/codex-linux-x64. Reinstall Codex: ..."). The CLI's words are the line.
_THROWN = re.compile(r"^(?:Uncaught )?(?:[A-Za-z_$][\w$.]*)?(?:Error|Exception)(?: \[\w+\])?: \S")


def _thrown(lines: list[str]) -> str | None:
    found = [ln for ln, after in pairwise(lines) if after.startswith("at ") and _THROWN.match(ln)]
    return found[-1] if found else None


def tail(text: str, limit: int = 300) -> str:
    """The last non-empty line(s) of ``text``, short enough for a one-line error; for a
    JavaScript program that died of an uncaught error, that error's own line."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    out = _thrown(lines) or " | ".join(lines[-3:])
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


class CliAgent:
    """An `Agent` that runs one CLI kind through the shared process runner."""

    # It runs every turn inside ``request.jail`` when there is one (``_run``): what the
    # turn guard may then take the jail's word for (``magi.seats.ask``).
    applies_jail: ClassVar[bool] = True

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
        if request.path:  # magi's own ``magi`` first (``magi ask``), not a magi on PATH
            env["PATH"] = os.pathsep.join([*map(str, request.path), env.get("PATH", "")])
        listener = _Listener(self.adapter, request)
        argv = inv.argv
        if request.jail is not None:
            prompt = () if request.prompt_file is None else (str(request.prompt_file.resolve()),)
            own = program_paths(request.jail, argv, env.get("PATH"))  # a CLI under /tmp
            net = request.jail.net
            if net is not None and net.socket:  # its way out: the bridge to magi's proxy
                argv = [*net.bridge, *argv]
                env.update(net.env)
            argv = bwrap_argv(request.jail.reading(*prompt, *own), argv)
        res = process.run(
            argv,
            cwd=request.cwd,
            stdin=inv.stdin,
            env=env,
            timeout=request.timeout,
            output_max_bytes=self.output_max_bytes,
            kill_grace=self.kill_grace,
            cancel=request.cancel,
            on_output=listener.line,
            give_up=listener.give_up,
            contained=request.jail is not None,
        )
        if res.start_error is not None:
            return TurnResult(
                TurnStatus.ERROR, error=f"{self.id}: {res.start_error}", duration_s=res.duration_s
            )
        if request.cancel is not None and request.cancel.cancelled:
            return TurnResult(
                TurnStatus.ERROR,
                error="cancelled: the run was stopped",
                duration_s=res.duration_s,
                raw_stdout=res.stdout,
                raw_stderr=res.stderr,
            )
        parsed = self.adapter.parse(res.stdout, res.stderr, res.exit_code, request)
        status, text, error = parsed.status, parsed.text, parsed.error
        failure = parsed.failure
        signal = listener.watch.current
        if res.gave_up is not None and signal is not None:
            # Only a cannot-reach / not-logged-in line for unreachable_after seconds, or
            # one the CLI said it cannot get past (a rejected key).
            status, text, failure = TurnStatus.ERROR, "", signal[0]
            waited = (
                "said once, a failure it only retries"
                if listener.watch.final
                else f"nothing else for {request.unreachable_after:g} s"
            )
            error = f"{self.kind}: {res.gave_up} ({waited}; the process group was killed)"
        elif res.timed_out:
            # Whatever was printed before the kill is not a reply; the session may still live.
            status, text = TurnStatus.TIMEOUT, ""
            error = f"no reply within {request.timeout:g} s; the process group was killed"
            words = signal[1] if signal is not None else listener.last
            if words:
                error += f"; its last words: {words}"
            failure = signal[0] if signal is not None else None
        else:
            if status is TurnStatus.ERROR and failure is None:
                # The error's own words, else a signal no progress cleared before it failed.
                failure = self.adapter.signals.classify(error or "") or (
                    signal[0] if signal is not None else None
                )
            if status is not TurnStatus.OK and res.truncated:
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
            failure=failure if status is not TurnStatus.OK else None,
            session_total=parsed.session_total,
        )


class _Listener:
    """One turn's live output: read by the adapter, watched for signals, passed on to show."""

    def __init__(self, adapter: Adapter, request: TurnRequest) -> None:
        self.adapter = adapter
        self.forward: Callable[[str], None] | None = request.on_output
        self.watch = SignalWatch(adapter.signals, request.unreachable_after)
        self.last = ""  # the latest line worth showing: the CLI's last words on a timeout

    def line(self, raw: str) -> None:
        seen = self.adapter.live(raw)
        shown = scrub(seen.text) if seen.text else ""
        self.watch.see(LiveLine(shown or None, seen.progress, seen.final))
        if not shown:
            return
        self.last = shown
        if self.forward is not None:
            self.forward(shown)

    def give_up(self) -> str | None:
        stuck = self.watch.stuck()
        return None if stuck is None else stuck[1]
