"""The subprocess runner every CLI adapter shares: own process group, capped output, timeout.

A turn's process must never outlive the turn, must never see magi's secrets, and must never
make magi hold an unbounded amount of output. So: the child starts in its own session (one
process group holding it and everything it spawns); its environment is built from an
allowlist (`child_env`); stdout and stderr are drained by threads into buffers that keep
the head and count what they drop; on timeout the whole group gets SIGTERM, a short grace,
then SIGKILL; and after a normal exit the group is killed as well, for leftover children.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

from magi.agents import census
from magi.agents.base import CancelToken
from magi.agents.live import Lines, scrub
from magi.model.config import AgentConfig

# Variables an agent CLI needs to run at all, plus each CLI's own config locations.
BASE_ENV = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "TERM",
    "TMPDIR",
    "SHELL",
    "TZ",
)
CLI_CONFIG_ENV = (
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "OPENCODE_CONFIG",
    "OPENCODE_CONFIG_DIR",
    "OPENCODE_CONFIG_CONTENT",
    "GEMINI_CLI_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
)
_CHUNK = 65536
_READER_JOIN_S = 5.0  # a child that escaped the group may hold a pipe open; stop waiting then


@dataclass(frozen=True)
class ProcessResult:
    """What one process left behind. Texts are capped and carry the truncation marker."""

    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool
    duration_s: float
    stdout_dropped: int = 0
    stderr_dropped: int = 0
    start_error: str | None = None  # the process never started (missing executable, bad cwd)
    gave_up: str | None = None  # why ``give_up`` ended the process early (not a timeout)

    @property
    def truncated(self) -> bool:
        return bool(self.stdout_dropped or self.stderr_dropped)


def allowlisted_env(base_env: Mapping[str, str], extra_names: Iterable[str] = ()) -> dict[str, str]:
    """The part of ``base_env`` any agent process may see: the allowlist and ``LC_*``."""
    names = {*BASE_ENV, *CLI_CONFIG_ENV, *extra_names}
    return {k: v for k, v in base_env.items() if k in names or k.startswith("LC_")}


def child_env(
    base_env: Mapping[str, str], agent_cfg: AgentConfig, magi_vars: Mapping[str, str]
) -> dict[str, str]:
    """The whole environment of one agent process; nothing outside these layers leaks in.

    Layers, later winning: the allowlist taken from ``base_env``; the agent's ``pass_env``
    names taken from ``base_env``; the agent's ``env`` values; then ``magi_vars`` (the per-turn
    MAGI_* variables and the adapter's own settings). magi's layer wins so that a config
    entry cannot undo what makes a read-only seat read-only (e.g. OPENCODE_PERMISSION).
    """
    env = allowlisted_env(base_env, agent_cfg.pass_env)
    env.update(agent_cfg.env)
    env.update(magi_vars)
    return env


class _Capture:
    """Drains one pipe on a thread, keeping at most ``cap`` bytes (the head).

    Every line is also handed to ``on_line`` as it arrives, past the cap too: the live view
    and the signal watch see what a flooding CLI says last, not only what it said first.
    """

    def __init__(
        self, pipe: IO[bytes], cap: int, on_line: Callable[[str], None] | None = None
    ) -> None:
        self._pipe = pipe
        self._cap = cap
        self._lines = Lines(lambda text: _tell(on_line, text)) if on_line else None
        self._lock = threading.Lock()
        self._chunks: list[bytes] = []
        self._kept = 0
        self.dropped = 0
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        fd = self._pipe.fileno()
        while chunk := os.read(fd, _CHUNK):
            with self._lock:
                room = self._cap - self._kept
                if room > 0:
                    self._chunks.append(chunk[:room])
                    self._kept += min(room, len(chunk))
                self.dropped += max(0, len(chunk) - max(room, 0))
            if self._lines is not None:
                self._lines.feed(chunk)
        if self._lines is not None:
            self._lines.close()
        self._pipe.close()

    def text(self) -> str:
        with self._lock:
            data, dropped = b"".join(self._chunks), self.dropped
        out = data.decode("utf-8", errors="replace")
        if dropped:
            out += f"\n[... {dropped} bytes truncated by magi ...]"
        return out


def _tell(on_line: Callable[[str], None] | None, text: str) -> None:
    if on_line is None:
        return
    try:
        on_line(scrub(text, limit=_CHUNK))
    except Exception:  # a failing listener must not stop the pipe from draining
        return


def _killpg(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is empty
        os.killpg(pgid, sig)


def _feed(pipe: IO[bytes], data: bytes) -> None:
    # On its own thread: a child that never reads stdin must not block magi past the timeout.
    try:
        with contextlib.suppress(OSError):  # BrokenPipe: the child exited or closed stdin
            pipe.write(data)
    finally:
        with contextlib.suppress(OSError):
            pipe.close()


# The token of whoever does not pass one (discovery probes, old callers): one mechanism.
DEFAULT_CANCEL = CancelToken()


def interrupt_all() -> None:
    """Cancel the default token: every process started without a token of its own dies."""
    DEFAULT_CANCEL.cancel()


def interrupted() -> bool:
    return DEFAULT_CANCEL.cancelled


def run(
    argv: list[str],
    *,
    cwd: Path | None,
    stdin: bytes | None,
    env: Mapping[str, str],
    timeout: float,
    output_max_bytes: int,
    kill_grace: float = 5.0,
    cancel: CancelToken | None = None,
    on_output: Callable[[str], None] | None = None,
    give_up: Callable[[], str | None] | None = None,
    poll_s: float = 0.5,
    contained: bool = False,
) -> ProcessResult:
    """Run ``argv`` to completion, ``timeout`` or ``cancel``; never raises for a failed process.

    ``on_output`` gets each line of stdout and stderr as it comes (trimmed, scrubbed of
    escape and control characters), on the reader threads. ``give_up`` is asked every
    ``poll_s`` seconds; a reason from it ends the process as a timeout would, and is kept
    in ``ProcessResult.gave_up``. ``contained``: ``argv`` is a jail with a pid namespace of
    its own that dies with this process (the census need not record it).
    """
    token = cancel or DEFAULT_CANCEL
    started = time.monotonic()
    try:
        # Owned by the census from before the fork until reaped: another seat's sweep of
        # orphans must never take it for one (``census.starting``).
        with census.starting() as own:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
            own(proc.pid)
    except OSError as e:
        # e.filename tells a missing executable from a missing working directory.
        why = f"{e.strerror or e}: {e.filename}" if e.filename else str(e.strerror or e)
        return ProcessResult(
            "",
            "",
            None,
            False,
            time.monotonic() - started,
            start_error=f"cannot start {argv[0]!r}: {why}",
        )
    try:
        # The pipes exist: PIPE was asked for each of them.
        out = _Capture(cast(IO[bytes], proc.stdout), output_max_bytes, on_output)
        err = _Capture(cast(IO[bytes], proc.stderr), output_max_bytes, on_output)
        if stdin is not None:
            threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True).start()

        # Wait without reaping (WNOWAIT): while the exited leader is a zombie its pid, which is
        # the group id, cannot be reused, so the group kill below can never hit an unrelated
        # process.
        exited = threading.Event()

        def watch() -> None:
            with contextlib.suppress(ChildProcessError):
                os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
            exited.set()

        threading.Thread(target=watch, daemon=True).start()
        token.register(proc.pid, contained=contained)
        gave_up: str | None = None
        try:
            gave_up, timed_out = _wait(exited, started + timeout, give_up, poll_s)
        finally:
            token.unregister(proc.pid)
        if timed_out or gave_up is not None:
            _killpg(proc.pid, signal.SIGTERM)
            if not exited.wait(kill_grace):
                _killpg(proc.pid, signal.SIGKILL)
                # Also the leader itself, should the group kill have failed: the wait below
                # must end.
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGKILL)
                exited.wait()
        _killpg(proc.pid, signal.SIGKILL)  # leftovers: children the CLI spawned and left behind
        census.reap_group(proc.pid)  # those re-parented to magi (bwrap's pid 1), before the leader
        exit_code = proc.wait()
        for cap in (out, err):
            cap.thread.join(_READER_JOIN_S)
        return ProcessResult(
            stdout=out.text(),
            stderr=err.text(),
            exit_code=None if timed_out or gave_up is not None else exit_code,
            timed_out=timed_out,
            duration_s=time.monotonic() - started,
            stdout_dropped=out.dropped,
            stderr_dropped=err.dropped,
            gave_up=gave_up,
        )
    finally:
        census.reaped(proc.pid)  # waited for: no longer one of magi's own


def _wait(
    exited: threading.Event,
    deadline: float,
    give_up: Callable[[], str | None] | None,
    poll_s: float,
) -> tuple[str | None, bool]:
    """(give_up's reason, timed out) once the process exits, the deadline passes or it gives up."""
    while True:
        left = deadline - time.monotonic()
        if exited.wait(max(0.0, left if give_up is None else min(left, poll_s))):
            return None, False
        if give_up is not None and (reason := give_up()) is not None:
            return reason, False
        if left <= 0:
            return None, True
