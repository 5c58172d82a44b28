"""Stand-in executables for the agent CLIs, so adapters can be tested against real processes.

One generic script (``standin_cli.py``) is written to a directory behind a shebang naming
this interpreter, parameterised by a JSON config beside it (the agent's environment is
filtered, so config cannot travel by environment). It logs every call and answers in the
chosen CLI's real output shape; see that script's docstring for the modes::

    s = write_standin(tmp_path, "codex", reply="done")
    agent = build_agent(s.agent_config())
    ...
    assert s.calls()[-1]["stdin"] == "the prompt"
"""

from __future__ import annotations

import json
import os
import stat
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from magi.model.config import AgentConfig

KINDS = ("claude", "codex", "opencode", "gemini", "antigravity", "command")
MODES = ("ok", "quota", "error", "malformed", "hang", "flood", "linger", "offline", "logged_out")
LOG_ENV = "MAGI_STANDIN_LOG"  # reaches the stand-in only if the agent's pass_env names it
# How a command-kind stand-in is invoked: every placeholder, so a test can see each replaced.
COMMAND_ARGS = (
    "--prompt-file",
    "{prompt_file}",
    "--cwd={cwd}",
    "--label",
    "{label}",
    "--session",
    "{session}",
)


@dataclass(frozen=True)
class StandIn:
    """One stand-in executable and the files beside it."""

    kind: str
    path: Path

    def _sidecar(self, suffix: str) -> Path:
        return self.path.with_name(self.path.name + suffix)

    @property
    def config_path(self) -> Path:
        return self._sidecar(".json")

    @property
    def log_path(self) -> Path:
        return self._sidecar(".log.jsonl")

    @property
    def pid_path(self) -> Path:
        return self._sidecar(".pids")

    @property
    def sessions_path(self) -> Path:
        return self._sidecar(".sessions.json")

    def configure(self, **options: Any) -> None:
        """Change the behaviour of the next calls (``mode``, ``reply``, ...)."""
        mode = options.get("mode")
        if mode is not None and mode not in MODES:
            raise ValueError(f"unknown stand-in mode {mode!r}; known: {', '.join(MODES)}")
        config = json.loads(self.config_path.read_text())
        config.update(options)
        self.config_path.write_text(json.dumps(config, indent=2))

    def calls(self, log: Path | None = None, *, versions: bool = False) -> list[dict[str, Any]]:
        """Every logged call, oldest first (argv, cwd, stdin, env, pid, prompt_file_text).

        A ``--version`` probe (a run reads each agent's CLI version once, for its record)
        is left out unless ``versions``: the calls are the turns and checks asked."""
        path = log or self.log_path
        if not path.exists():
            return []
        out = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
        return [c for c in out if versions or c["argv"][1:] != ["--version"]]

    def pids(self) -> list[int]:
        """The pids a ``hang``/``linger`` call left: its own, then its sleeping child's."""
        if not self.pid_path.exists():
            return []
        return [int(p) for p in self.pid_path.read_text().split()]

    def command(self) -> list[str]:
        """The ``command`` an AgentConfig needs to run this stand-in."""
        args = COMMAND_ARGS if self.kind == "command" else ()
        return [str(self.path), *args]

    def agent_config(self, agent_id: str | None = None, **fields: Any) -> AgentConfig:
        """An ``[[agents]]`` entry of this stand-in's kind that runs the stand-in."""
        return AgentConfig(
            id=agent_id or f"{self.kind}-standin", kind=self.kind, command=self.command(), **fields
        )


def script_text() -> str:
    """The stand-in script, behind a shebang naming the running interpreter."""
    return f"#!{sys.executable}\n{_resource('standin_cli.py')}"


def _resource(name: str) -> str:
    return resources.files("magi.testing").joinpath(name).read_text(encoding="utf-8")


def write_standin(
    directory: Path, kind: str, *, name: str | None = None, **options: Any
) -> StandIn:
    """Write an executable stand-in for ``kind`` into ``directory``; options as `configure`."""
    if kind not in KINDS:
        raise ValueError(f"unknown stand-in kind {kind!r}; known: {', '.join(KINDS)}")
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / (name or {"antigravity": "agy"}.get(kind, kind))
    path.write_text(script_text(), encoding="utf-8")
    (directory / "standin_offline.py").write_text(_resource("standin_offline.py"), encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    standin = StandIn(kind, path)
    standin.config_path.write_text(json.dumps({"kind": kind, "mode": "ok", "reply": "done"}))
    for stale in (standin.log_path, standin.pid_path, standin.sessions_path):
        stale.unlink(missing_ok=True)
    standin.configure(**options)
    return standin


def process_gone(pid: int) -> bool:
    """True if ``pid`` no longer runs. A zombie counts as gone: it runs nothing, and an init
    that does not reap (as in some containers) would otherwise keep it "alive" forever."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    proc = Path(f"/proc/{pid}/stat")
    if not proc.parent.parent.is_dir():
        return False  # no /proc (not Linux): a zombie cannot be told from a live process
    try:
        stat_line = proc.read_text()
    except OSError:
        return True  # it went away between the two looks
    # The state letter follows the parenthesised command name, which may contain spaces.
    return stat_line.rsplit(")", 1)[-1].split()[0] in ("Z", "X")
