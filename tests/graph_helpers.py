"""Shared set-up for the competition tests: a real repo with a bare remote, scripted agents."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from magi import engine
from magi.agents import census
from magi.agents.base import Agent
from magi.demo import make_repo
from magi.demo.repo import E2E, TASK
from magi.git.repo import Git
from magi.graph import PIPELINE, Stage
from magi.model.config import Config
from magi.model.run import Run
from magi.state.store import Store
from magi.testing.inprocess import KIND, in_process

SCRIPTED = [sys.executable, "-m", "magi.demo.scripted"]
MAGI = [sys.executable, "-m", "magi"]
NOW = __import__("datetime").datetime(2026, 11, 29, 12, 0, 0, tzinfo=__import__("datetime").UTC)


def scratch_repo(tmp: Path) -> Path:
    """The demo's textstats repo, pushed to a bare remote as origin/main."""
    repo = tmp / "repo"
    make_repo(repo)
    remote = tmp / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    subprocess.run(["git", "remote", "add", "origin", str(remote)], cwd=repo, check=True)
    subprocess.run(["git", "push", "-q", "origin", "main"], cwd=repo, check=True)
    return repo


# Shell fragments for implementers written inline as "sh:<script>".
FIX = "printf 'def word_count(t):\\n    return len(t.split())\\n' > textstats.py"
COMMIT = "git add -A && git -c user.name=x -c user.email=x@y commit -q"


def _command(persona: str) -> list[str]:
    """A scripted persona, or an inline shell script written as "sh:<script>"."""
    if persona.startswith("sh:"):
        return ["sh", "-c", persona.removeprefix("sh:")]
    return [*SCRIPTED, persona]


def config(
    scripted_dir: Path,
    implementers: dict[str, str],
    judges: dict[str, str] | None = None,
    reviewers: dict[str, str] | None = None,
    *,
    processes: bool = False,
    **tables: dict[str, Any],
) -> Config:
    """A Config of scripted agents: {agent id: persona or "sh:<script>"} per role.

    A persona sits in process (``kind = "scripted"``, ``magi.testing.inprocess``) and the
    run is unjailed, unless the test asks for ``processes``, names a jail (``sandbox``
    with a ``mode``), or the persona acts on a process (hangs, escapes, waits): then every
    persona is a ``command`` agent, a process a turn, as a user's own would be. Reviewers
    default to the first two judges (an inline-shell implementer must never be rotated
    into a review seat); with neither, no reviewer sits.
    """
    judges = (
        judges
        if judges is not None
        else {
            "j1": "evidence",
            "j2": "minimal",
            "j3": "evidence",
        }
    )
    env = {"MAGI_SCRIPTED_DIR": str(scripted_dir)}
    seats = {**implementers, **judges, **(reviewers or {})}
    jailed = "mode" in tables.get("sandbox", {}) and tables["sandbox"]["mode"] != "off"
    inside = not (processes or jailed) and all(
        p.startswith("sh:") or in_process(p) for p in seats.values()
    )

    def agent(aid: str, persona: str) -> dict[str, Any]:
        if inside and not persona.startswith("sh:"):
            return {"id": aid, "kind": KIND, "command": [persona], "env": env}
        return {"id": aid, "kind": "command", "command": _command(persona), "env": env}

    agents = [agent(aid, persona) for aid, persona in seats.items()]
    if inside:
        tables["sandbox"] = {"mode": "off", **tables.get("sandbox", {})}
    review_roles = list(reviewers) if reviewers else list(judges)[:2]
    graph = {
        "candidates": len(implementers),
        "judges": len(judges),
        "timeout_implement": 60,
        "timeout_judge": 60,
        "timeout_verify": 60,
        "timeout_review": 60,
        "timeout_fix": 60,
        "reviewers": len(review_roles),
        **tables.pop("graph", {}),
    }
    data: dict[str, Any] = {
        "agents": agents,
        "roles": {
            "implementers": list(implementers),
            "judges": list(judges),
            "reviewers": review_roles,
            **tables.pop("roles", {}),
        },
        "graph": graph,
        "verify": {"e2e": [E2E], **tables.pop("verify", {})},
        # The scripted agents keep their log and state here: writable inside the jail.
        "sandbox": {"state": [str(scripted_dir)], **tables.pop("sandbox", {})},
        **tables,
    }
    return Config.model_validate(data)


def start(
    repo: Path,
    home: Path,
    cfg: Config,
    *,
    seed: int = 1,
    task: str = TASK,
    agents: Mapping[str, Agent] | None = None,
    pipeline: Sequence[Stage] = PIPELINE,
) -> Run:
    """A whole competition through the engine, as every surface runs one (or its first stages)."""
    outcome = engine.start(
        task=task,
        source="test",
        config=cfg,
        git=Git.discover(repo),
        store=Store(home),
        environ=dict(os.environ),
        now=NOW,
        rng=random.Random(seed),
        seed=seed,
        agents=agents,
        pipeline=pipeline,
    )
    return outcome.run


def calls(scripted_dir: Path) -> list[dict[str, Any]]:
    log = scripted_dir / "calls.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def seat_calls(scripted_dir: Path) -> Counter[tuple[str, str]]:
    """How many times each (seat, node) was asked."""
    return Counter((c["seat"], c["node"]) for c in calls(scripted_dir))


def prompts(home: Path, run: Run, node: str) -> list[str]:
    art = home / "runs" / run.id / "artifacts"
    return [p.read_text() for p in sorted(art.glob(f"{node}-*.prompt.md"))]


def git_out(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def wait_for(predicate: Callable[[], bool], what: str, deadline_s: float = 120.0) -> None:
    """Poll a condition until it holds; fail (never hang) past the deadline."""
    end = time.monotonic() + deadline_s
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {deadline_s:.0f} s waiting for {what}")
        time.sleep(0.05)


def toml_config(sd: Path, personas: dict[str, str], judges: dict[str, str]) -> str:
    """The magi.toml of scripted implementers ``personas`` and ``judges``, unjailed."""
    lines = []
    for aid, persona in {**personas, **judges}.items():
        cmd = json.dumps(_command(persona))
        lines += [
            "[[agents]]",
            f'id = "{aid}"',
            'kind = "command"',
            f"command = {cmd}",
            f'env = {{ MAGI_SCRIPTED_DIR = "{sd}" }}',
            "",
        ]
    lines += [
        "[roles]",
        f"implementers = {json.dumps(list(personas))}",
        f"judges = {json.dumps(list(judges))}",
        f"reviewers = {json.dumps(list(judges)[:2])}",  # never a hanging implementer
        "",
        "[graph]",
        f"candidates = {len(personas)}",
        f"judges = {len(judges)}",
        "max_parallel = 3",
        "",
        "[verify]",
        'e2e = ["python3 -m unittest -q"]',
        "",
        # These tests find hung agents by the pid they wrote; a jailed agent has its own pid
        # namespace, so its pid means nothing out here. The jail has tests of its own.
        "[sandbox]",
        'mode = "off"',
    ]
    return "\n".join(lines) + "\n"


class LiveRun:
    """``magi run`` in a subprocess of its own session, with its repo, MAGI_HOME and config.

    ``close()`` (the ``live_run`` fixture calls it) kills whatever a failed test left: the
    magi it started and every hanging scripted agent, so a failure never leaks a process.
    """

    def __init__(self, tmp: Path, personas: dict[str, str], judges: dict[str, str]) -> None:
        self.sd = tmp / "scripted"
        self.sd.mkdir()
        self.repo, self.home = scratch_repo(tmp), tmp / "home"
        self.cfg = tmp / "magi.toml"
        self.cfg.write_text(toml_config(self.sd, personas, judges))
        self.env = {**os.environ, "MAGI_HOME": str(self.home), "MAGI_CONFIG_DIR": str(tmp / "n")}
        # Wide: what a test reads must not wrap where its tmp path (longer under xdist) would.
        self.env["COLUMNS"] = "400"
        self.store = Store(self.home)
        self._procs: list[subprocess.Popen[str]] = []

    def start(self, *extra: str, seed: int | None = 3) -> subprocess.Popen[str]:
        """``magi run`` of the task (with ``extra`` options), stdout and stderr on one pipe."""
        seeded = ["--seed", str(seed)] if seed is not None else []
        proc = subprocess.Popen(
            [*MAGI, "run", "--config", str(self.cfg), *seeded, *extra, "fix textstats"],
            cwd=self.repo,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self._procs.append(proc)
        return proc

    def ended(self, proc: subprocess.Popen[str], after: str, timeout: float = 120) -> str:
        """Its output once it exits; a failure naming ``after`` if it has not within timeout."""
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as e:
            said = e.output.decode(errors="replace") if isinstance(e.output, bytes) else e.output
            raise AssertionError(
                f"magi still running {timeout:.0f} s after {after}; it said:\n{said or ''}"
            ) from None
        return out

    def magi(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """A magi command in the repo, bounded: a hang fails the test instead of stalling it."""
        try:
            return subprocess.run(
                [*MAGI, *args],
                cwd=self.repo,
                env=self.env,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as e:
            said = e.output.decode(errors="replace") if isinstance(e.output, bytes) else e.output
            raise AssertionError(
                f"magi {' '.join(args)} still running after {timeout:.0f} s; it said:\n{said}"
            ) from None

    def hung(self, pattern: str) -> int:
        """The pid a scripted seat wrote into its ``pattern`` marker as it began to hang."""
        wait_for(lambda: bool(list(self.sd.glob(pattern))), f"a seat hanging ({pattern})")
        marker = next(self.sd.glob(pattern))
        wait_for(lambda: bool(marker.read_text()), "the hanging seat's pid")
        return int(marker.read_text())

    def run_id(self) -> str:
        rid = self.store.latest()
        assert rid is not None
        return rid

    def close(self) -> None:
        for proc in self._procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.communicate(timeout=30)
        self.kill_hung()

    def kill_hung(self) -> None:
        """SIGKILL every scripted seat still hanging (each is in a session of its own)."""
        for marker in self.sd.glob("hung-*"):
            with contextlib.suppress(ValueError, ProcessLookupError):
                pid = int(marker.read_text())
                # Only the scripted agent of this test: never a process that took its pid.
                if census.environ(pid).get("MAGI_SCRIPTED_DIR") == str(self.sd):
                    os.kill(pid, signal.SIGKILL)
