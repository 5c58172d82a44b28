"""``make bench``, the real CLIs: magi's own CPU per turn beside the CLIs' in one jailed
competition of the real claude and codex against the scripted model.

The competition is the real-CLI tier's (``tests/real/test_real_competition.py``: two
implementers, both judging, a deliberation round, the vote, two review rounds with a
blocking finding and its fix). The scripted model runs in a process of its own, so its CPU
is nobody's here; magi runs in this process. magi's own CPU is this process's (user +
system); the rest is its children's: the CLIs in their jails, and git. Goal: magi's share
of the run's CPU at most 10 %. Beside it, for scale, the stand-in baseline: ``bench/run.py``
measures magi's own CPU per competition with instant scripted agents.

Needs ``MAGI_REAL_CLIS`` (``make bench`` installs the pinned CLIs and sets it).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from magi.demo import make_repo
from magi.state.store import Store
from magi.testing.cli import invoke
from magi.testing.model_scripts import pointed

GOAL = 0.10


def _cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def _config(url: str, home: Path) -> str:
    lines: list[str] = []
    for kind in ("claude", "codex"):
        a = pointed(kind, url, home)
        env = ", ".join(f"{k} = {json.dumps(v)}" for k, v in a.env.items() if k != "HOME")
        lines += ["[[agents]]", f'id = "{a.id}"', f'kind = "{a.kind}"']
        lines += [f"args = {json.dumps(a.args)}", f"env = {{ {env} }}", ""]
    lines += [
        "[roles]",
        'implementers = ["cl", "cx"]',
        'judges = ["cl", "cx"]',
        'reviewers = ["cl"]',
        "[graph]",
        "candidates = 2",
        "judges = 2",
        "deliberate_rounds = 1",
        "reviewers = 1",
        "review_rounds = 2",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    bin_dir = os.environ.get("MAGI_REAL_CLIS")
    if not bin_dir or not Path(bin_dir, "claude").exists():
        print("bench/real.py: MAGI_REAL_CLIS names no directory with the CLIs (make bench)")
        return 1
    scratch = Path(bin_dir).resolve().parents[1] / "scratch"
    scratch.mkdir(exist_ok=True)
    root = Path(tempfile.mkdtemp(dir=scratch))
    server = subprocess.Popen(
        [sys.executable, "-m", "magi.testing.model_scripts"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        repo, home = root / "repo", root / "home"
        make_repo(repo)
        home.mkdir()
        (repo / "magi.toml").write_text(_config(url, home))
        os.chdir(repo)
        env = {
            "MAGI_HOME": str(root / "magi-home"),
            "MAGI_CONFIG_DIR": str(root / "no-user-config"),
            "PATH": f"{bin_dir}:{os.environ['PATH']}",
            "HOME": str(home),
        }
        own, children = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
        res = invoke(["run", "--seed", "3", "note who wrote textstats"], env=env)
        own = _cpu(resource.RUSAGE_SELF) - own
        children = _cpu(resource.RUSAGE_CHILDREN) - children
        store = Store(root / "magi-home")
        run = store.load_run(store.latest() or "")
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait()
        shutil.rmtree(root, ignore_errors=True)
    if res.exit_code != 0:
        print(res.output)
        return 1
    turns = len(run.turns)
    share = own / (own + children)
    verdict = "met" if share <= GOAL else "NOT met"
    print(f"real CLIs (claude, codex), one jailed competition: {turns} turns, {run.status.value}")
    print(f"  magi's own CPU   {own:.2f} s  ({own / turns * 1000:.0f} ms a turn)")
    print(f"  the CLIs and git {children:.2f} s  ({children / turns * 1000:.0f} ms a turn)")
    print(f"  magi's share     {share:.1%}  (goal <= {GOAL:.0%}: {verdict})")
    return 0 if share <= GOAL else 1


if __name__ == "__main__":
    raise SystemExit(main())
