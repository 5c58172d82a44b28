"""``make bench``, the real CLIs: magi's own CPU per turn beside the CLIs' in one jailed
competition of the real claude, codex, gemini and opencode against the scripted model, and
beside the stand-in baseline.

The competition is the real-CLI tier's four-CLI one (``tests/real/test_real_competition.py``:
four implementers, all four judging, the vote, two review rounds with a blocking finding and
its fix). The scripted model runs in a process of its own, so its CPU is nobody's here;
magi runs in this process. magi's own CPU is this process's (user + system); the rest is
its children's: the CLIs in their jails, and git. Goal: magi's share of the run's CPU at
most 10 %.

The stand-in baseline, measured in the same run on the same repository: ``bench/run.py``'s
competition (3 candidates, 3 judges, 2 reviewers, one round, instant command agents,
jailed), whose turns cost the agents almost nothing: magi's own CPU per turn there is what
a turn costs magi when nothing else runs, and here the same per turn should hold.

Needs ``MAGI_REAL_CLIS`` (``make bench`` installs the pinned CLIs and sets it).
"""

from __future__ import annotations

import importlib.util
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from magi.demo import make_repo
from magi.state.store import Store
from magi.testing.cli import invoke
from magi.testing.model_scripts import pointed

GOAL = 0.10
CLIS = {"cl": "claude", "cx": "codex", "gm": "gemini", "oc": "opencode"}


def _cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def _config(url: str, home: Path) -> str:
    lines: list[str] = []
    for kind in CLIS.values():
        a = pointed(kind, url, home)
        env = ", ".join(f"{k} = {json.dumps(v)}" for k, v in a.env.items() if k != "HOME")
        lines += ["[[agents]]", f'id = "{a.id}"', f'kind = "{a.kind}"']
        lines += [f'model = "{a.model}"'] if a.model else []
        lines += [f"args = {json.dumps(a.args)}", f"env = {{ {env} }}", ""]
    seats = json.dumps(list(CLIS))
    lines += [
        "[roles]",
        f"implementers = {seats}",
        f"judges = {seats}",
        'reviewers = ["cl"]',
        "[graph]",
        f"candidates = {len(CLIS)}",
        f"judges = {len(CLIS)}",
        "deliberate_rounds = 1",
        "reviewers = 1",
        "review_rounds = 2",
    ]
    return "\n".join(lines) + "\n"


def real(bin_dir: str, root: Path) -> tuple[int, str, float, float]:
    """The real-CLI competition: its turns, status, magi's own CPU and the children's."""
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
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait()
        os.chdir(root)
    if res.exit_code != 0:
        raise SystemExit(f"bench/real.py: the real-CLI competition failed:\n{res.output}")
    store = Store(root / "magi-home")
    run = store.load_run(store.latest() or "")
    return len(run.turns), run.status.value, own, children


def _bench_run() -> ModuleType:
    """``bench/run.py``, whose competition is the stand-in baseline."""
    spec = importlib.util.spec_from_file_location("bench_run", Path(__file__).with_name("run.py"))
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def standin(root: Path) -> tuple[int, float, float]:
    """The stand-in competition on the same repository: turns, magi's CPU, the children's."""
    bench = _bench_run()
    # Its implementers append their label to a file of this repository, not of its own.
    change = ["sh", "-c", 'echo "# $MAGI_LABEL" >> textstats.py && echo done']
    bench.implementer = lambda sleep: change
    repo = root / "standin-repo"
    make_repo(repo)
    run, own, children = bench.compete(repo, root / "standin-home", bench.config((0, 0, 0)), 3)
    return len(run.turns), own, children


def main() -> int:
    bin_dir = os.environ.get("MAGI_REAL_CLIS")
    if not bin_dir or not all(Path(bin_dir, c).exists() for c in CLIS.values()):
        print("bench/real.py: MAGI_REAL_CLIS names no directory with the CLIs (make bench)")
        return 1
    scratch = Path(bin_dir).resolve().parents[1] / "scratch"
    scratch.mkdir(exist_ok=True)
    root = Path(tempfile.mkdtemp(dir=scratch))
    try:
        turns, status, own, children = real(bin_dir, root)
        base_turns, base_own, base_children = standin(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    share = own / (own + children)
    base_share = base_own / (base_own + base_children)
    verdict = "met" if share <= GOAL else "NOT met"
    names = ", ".join(CLIS.values())
    print(f"real CLIs ({names}), one jailed competition: {turns} turns, {status}")
    print(f"  magi's own CPU   {own:.2f} s  ({own / turns * 1000:.0f} ms a turn)")
    print(f"  the CLIs and git {children:.2f} s  ({children / turns * 1000:.0f} ms a turn)")
    print(f"  magi's share     {share:.1%}  (goal <= {GOAL:.0%}: {verdict})")
    print(f"stand-in baseline (bench/run.py's competition, jailed): {base_turns} turns")
    print(f"  magi's own CPU   {base_own:.2f} s  ({base_own / base_turns * 1000:.0f} ms a turn)")
    per = base_children / base_turns * 1000
    print(f"  stand-ins and git {base_children:.2f} s  ({per:.0f} ms a turn)")
    print(f"  magi's share     {base_share:.1%}  (reported)")
    return 0 if share <= GOAL else 1


if __name__ == "__main__":
    raise SystemExit(main())
