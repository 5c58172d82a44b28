"""Shared set-up for the competition tests: a real repo with a bare remote, scripted agents."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from magi import engine
from magi.agents.base import Agent
from magi.config.model import Config
from magi.demo import make_repo
from magi.demo.repo import E2E, TASK
from magi.git import Git
from magi.state.model import Run
from magi.state.store import Store

SCRIPTED = [sys.executable, "-m", "magi.testing.scripted"]
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
    **tables: dict[str, Any],
) -> Config:
    """A Config of scripted command agents: {agent id: persona or "sh:<script>"} per role.

    Reviewers default to the first two judges (an inline-shell implementer must never be
    rotated into a review seat); with neither, no reviewer sits.
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
    agents = [
        {"id": aid, "kind": "command", "command": _command(persona), "env": env}
        for aid, persona in {**implementers, **judges, **(reviewers or {})}.items()
    ]
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
) -> Run:
    """A whole competition through the engine, as every surface runs one."""
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
    )
    return outcome.run


def calls(scripted_dir: Path) -> list[dict[str, Any]]:
    log = scripted_dir / "calls.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def prompts(home: Path, run: Run, node: str) -> list[str]:
    art = home / "runs" / run.id / "artifacts"
    return [p.read_text() for p in sorted(art.glob(f"{node}-*.prompt.md"))]


def git_out(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout
