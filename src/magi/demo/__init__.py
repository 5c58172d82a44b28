"""``magi demo``: a complete competition offline, on a scratch repo, with the scripted roster.

The demo is a product feature (what a new user runs first), so it lives here and not in
``magi.testing``; its agents are the scripted personas of ``magi.demo.scripted``, run as
separate processes through the ``command`` kind, exactly as a user's own command agent is.
"""

from __future__ import annotations

import os
import random
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from magi.demo import repo as demo_repo

if TYPE_CHECKING:  # the personas (``python -m magi.demo.scripted``, a process a turn)
    # import this package: it stays light, and the engine is imported where the demo runs.
    from magi.model.run import Run
    from magi.seats import Reporter

CONFIG = """\
# The demo's roster: scripted stand-ins speaking the `command` agent protocol.
# Three implementers (one right, one partial, one wrong) and three judges who read the
# verification results in their packets. Swap in real CLIs with `kind = "claude"` etc.

[[agents]]
id = "right"
kind = "command"
command = ["{python}", "-m", "magi.demo.scripted", "right"]

[[agents]]
id = "partial"
kind = "command"
command = ["{python}", "-m", "magi.demo.scripted", "partial"]

[[agents]]
id = "wrong"
kind = "command"
command = ["{python}", "-m", "magi.demo.scripted", "wrong"]

[[agents]]
id = "judge-evidence-1"
kind = "command"
command = ["{python}", "-m", "magi.demo.scripted", "evidence"]

[[agents]]
id = "judge-evidence-2"
kind = "command"
command = ["{python}", "-m", "magi.demo.scripted", "evidence"]

[[agents]]
id = "judge-minimal"
kind = "command"
command = ["{python}", "-m", "magi.demo.scripted", "minimal"]

[roles]
implementers = ["right", "partial", "wrong"]
judges = ["judge-evidence-1", "judge-minimal", "judge-evidence-2"]

[graph]
candidates = 3
judges = 3
deliberate_rounds = 1
timeout_implement = 120
timeout_judge = 60

[verify]
e2e = ["{e2e}"]
"""


def commit(path: Path, message: str, *, init: bool = False) -> None:
    """Commit everything in ``path`` (``git init -b main`` first when asked), as the demo user."""
    ident = {"NAME": "demo", "EMAIL": "demo@example.invalid"}
    env = {
        **os.environ,
        **{f"GIT_{who}_{k}": v for who in ("AUTHOR", "COMMITTER") for k, v in ident.items()},
    }
    steps = [["git", "init", "-q", "-b", "main"]] if init else []
    for argv in [*steps, ["git", "add", "-A"], ["git", "commit", "-q", "-m", message]]:
        subprocess.run(argv, cwd=path, env=env, check=True, stdin=subprocess.DEVNULL)


def make_repo(path: Path) -> None:
    """A git repo holding the buggy module and its failing tests, on branch main."""
    path.mkdir(parents=True, exist_ok=True)
    for name, text in demo_repo.FILES.items():
        (path / name).write_text(text, encoding="utf-8")
    commit(path, "textstats with two failing tests", init=True)


def run_demo(
    where: Path | None, *, seed: int, reporter: Reporter, python: str
) -> tuple[Run, Path, int | None]:
    """The demo run, where it lives, and the exit code of a signal that cut it short."""
    from magi import engine
    from magi.agents.registry import kinds
    from magi.config.load import load_config
    from magi.git.repo import Git
    from magi.state.store import Store

    home = Path(where) if where else Path(tempfile.mkdtemp(prefix="magi-demo-"))
    repo = home / "repo"
    make_repo(repo)
    cfg_file = repo / ".magi" / "config.toml"
    cfg_file.parent.mkdir(exist_ok=True)
    cfg_file.write_text(CONFIG.format(python=python, e2e=demo_repo.E2E), encoding="utf-8")
    commit(repo, "magi config")
    config = load_config(repo, config_path=cfg_file, environ=os.environ, known_kinds=kinds()).config
    reporter.note(f"demo repository: {repo}")
    outcome = engine.start(
        task=demo_repo.TASK,
        source="demo",
        config=config,
        git=Git.discover(repo),
        store=Store(home / "magi-home"),
        environ=os.environ,
        reporter=reporter,
        seed=seed,
        rng=random.Random(seed),
    )
    return outcome.run, home, outcome.signal_exit
