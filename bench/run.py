"""``make bench``: what a competition costs magi itself, as ratios against baselines measured
in the same run.

1. magi's own CPU per competition (3 candidates, 3 judges, 2 reviewers, 1 review round,
   instant scripted agents, a generated 2,000-file repo), beyond git's and the agents' work
   (child processes, counted apart); goal <= 0.2 s.
2. The same competition's whole CPU (magi's own and every child's), run as a user runs it
   (jailed), against a shell script doing the competition's git work and agent calls by
   hand (``SHELL_SCRIPT``), run alternately; goal <= 1.0x. Beside it, reported: the same
   unjailed, where magi checks out what the script does (a tree per judge).
3. Per seat turn, where magi's own CPU goes: the seat's jail, the agent's spawn, the guards
   before and after, the census, record saves and artifacts (thread CPU, inclusive);
   and the git processes and full checkouts per run. Reported, no goal of their own.
4. prep wall time against raw ``git init`` + alternates + checkout of as many candidate
   clones, in parallel as prep makes them; goal <= 1.1x.
5. implement-wave wall time against the slowest seat, agents that sleep; goal <= 1.05x.
6. peak memory (max RSS) of this process over the competitions; goal <= 200 MB.
7. bytes of prompt sent to agents after the first judgement (deliberation, votes, review,
   fix) with sessions on against ``graph.sessions = false``. The goal, <= 0.2x, is judged
   on the continued turns (a seat's second turn on: deliberation, votes, the fixer, a
   reviewer's later rounds), since what it measures is that a continued conversation is
   sent only the new turn. A seat's first turn (each reviewer's) opens its conversation and
   carries the patch with sessions on or off, byte for byte: the total including those is
   reported beside it, with no goal of its own.

Absolute times on a noisy machine do not hold; the ratios do. Each figure is the median of
a few repetitions, and each baseline runs right beside what it is the baseline of.
"""

from __future__ import annotations

import functools
import importlib
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from magi import engine
from magi.demo import commit
from magi.git.repo import Git
from magi.graph import prep
from magi.model.config import Config
from magi.model.run import Run, RunStatus
from magi.state.store import Store

REPS = 5
PAIRS = 31
SHELL_PAIRS = 3
FILES = 2000

# Judge 1 ranks B first, the others A: a split, so the panel deliberates. Every seat reports
# a session (the command-agent convention), so later turns continue the conversation.
JUDGE = r"""echo "MAGI-SESSION: ${MAGI_SESSION:-$MAGI_SEAT-$$}" >&2
first='"A", "B"'; [ "$MAGI_SEAT" = judge-1 ] && first='"B", "A"'
case "$MAGI_NODE" in
  vote) printf '```json\n{"vote": "A", "rationale": "r"}\n```\n' ;;
  deliberate) printf '```json\n{"ranking": ["A", "B", "C"], "argument": "a"}\n```\n' ;;
  review) printf '```json\n{"findings": []}\n```\n' ;;
  *) printf '```json\n{"ranking": [%s, "C"], "rationale": "r"}\n```\n' "$first" ;;
esac"""
AFTER_FIRST_JUDGEMENT = ("deliberate", "vote", "review", "fix")


def implementer(sleep: float) -> list[str]:
    body = f"sleep {sleep}; " if sleep else ""
    return ["sh", "-c", body + 'echo "$MAGI_LABEL" >> src/d0/f0.txt && echo done']


def make_repo(root: Path) -> Path:
    repo = root / "repo"
    for i in range(FILES):
        d = repo / "src" / f"d{i % 40}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}.txt").write_text(f"file {i}\n" * 20)
    commit(repo, "generated", init=True)
    # A checkout a person works in has an index written after its files. This one was
    # written in the same second as them: every entry is "racily clean"
    # (https://git-scm.com/docs/racy-git), and each `git status` of it would read all 2,000
    # files again, forever (magi's status writes no index), which no lived-in checkout does.
    time.sleep(1.1)
    subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=repo, check=True)
    return repo


def config(
    sleeps: tuple[float, float, float], *, sessions: bool = True, jail: str = "auto"
) -> Config:
    agents = [
        {"id": f"i{n}", "kind": "command", "command": implementer(s)} for n, s in enumerate(sleeps)
    ]
    agents += [{"id": f"j{n}", "kind": "command", "command": ["sh", "-c", JUDGE]} for n in range(3)]
    return Config.model_validate(
        {
            "agents": agents,
            "roles": {
                "implementers": ["i0", "i1", "i2"],
                "judges": ["j0", "j1", "j2"],
                "reviewers": ["j1", "j2"],
            },
            "graph": {
                "candidates": 3,
                "judges": 3,
                "max_parallel": 4,
                "reviewers": 2,
                "review_rounds": 1,
                "sessions": sessions,
            },
            "sandbox": {"mode": jail},
        }
    )


def compete(repo: Path, home: Path, cfg: Config, seed: int) -> tuple[Run, float, float]:
    """One competition; returns the run, magi's own CPU and the children's CPU."""
    store = Store(home)
    kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu0 = time.process_time()
    run = engine.start(
        task="append the label",
        source="bench",
        config=cfg,
        git=Git.discover(repo),
        store=store,
        environ=dict(os.environ),
        now=datetime.now(UTC),
        rng=random.Random(seed),
        seed=seed,
    ).run
    cpu = time.process_time() - cpu0
    kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    kids = (kids1.ru_utime - kids0.ru_utime) + (kids1.ru_stime - kids0.ru_stime)
    assert run.status is RunStatus.READY, run.reason
    return run, cpu, kids


def bytes_sent(home: Path, run: Run) -> tuple[int, int]:
    """(continued, first) prompt bytes of the turns after the first judgement, as stored.

    A seat's first turn opens its conversation; its later turns continue it (sessions on)
    or re-send the full context (sessions off).
    """
    root = home / "runs" / run.id
    out = [0, 0]
    for t in run.turns:
        if t.node in AFTER_FIRST_JUDGEMENT and t.prompt_artifact:
            out[1 if t.turn == 1 else 0] += (root / t.prompt_artifact).stat().st_size
    return out[0], out[1]


RAW_CLONE = r"""
one() {
  d="$root/c$1"
  git init -q --template= -b "bench-$1" "$d"
  echo "$objects" > "$d/.git/objects/info/alternates"
  echo "$base" > "$d/.git/refs/heads/bench-$1"
  git -C "$d" read-tree --reset -u HEAD
}
i=0; while [ $i -lt "$n" ]; do one $i & i=$((i + 1)); done; wait
"""


def raw_clones(repo: Path, root: Path, n: int) -> float:
    """What prep does at the least, by hand: a git dir, the alternates file, the branch and
    the checkout per candidate, all candidates at once (as prep makes them)."""
    base = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()
    env = {
        **os.environ,
        "root": str(root),
        "objects": str(repo / ".git" / "objects"),
        "base": base,
        "n": str(n),
    }
    root.mkdir(parents=True)
    t0 = time.monotonic()
    subprocess.run(["sh", "-c", RAW_CLONE], env=env, check=True)
    return time.monotonic() - t0


SHELL_SCRIPT = r"""
set -e
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench
export GIT_COMMITTER_EMAIL=bench@localhost MAGI_RUN=shell
base=$(git -C "$repo" rev-parse HEAD)
objects="$repo/.git/objects"
# prep: a clone per candidate (git dir, alternates, branch, checkout), all at once
for L in A B C; do (
  git init -q --template= -b "b$L" "$root/$L"
  echo "$objects" > "$root/$L/.git/objects/info/alternates"
  echo "$base" > "$root/$L/.git/refs/heads/b$L"
  git -C "$root/$L" read-tree --reset -u HEAD
) & done; wait
# implement: each agent in its clone; its work committed and fetched into the repository
for L in A B C; do (
  cd "$root/$L"
  MAGI_LABEL=$L MAGI_SEAT=implementer-$L MAGI_NODE=implement sh -c "$impl" > /dev/null 2>&1
  git add -A && git commit -q -m work
  git -C "$repo" fetch -q --no-tags "$root/$L/.git" "+refs/heads/b$L:refs/heads/$prefix/$L"
) & done; wait
# the packets: every candidate's numstat and patch
for L in A B C; do
  git -C "$repo" diff --numstat "$base" "$prefix/$L"
  git -C "$repo" diff "$base" "$prefix/$L"
done > "$root/packets"
# judges: a detached worktree each; judge and vote at once, deliberation in turn
for j in 1 2 3; do git -C "$repo" worktree add -q --detach "$root/j$j" "$base"; done
ask() {
  (cd "$root/j$1" && MAGI_SEAT=$2 MAGI_NODE=$3 sh -c "$judge" < "$root/packets" > /dev/null 2>&1)
}
for j in 1 2 3; do ask $j judge-$j judge & done; wait
for j in 1 2 3; do ask $j judge-$j deliberate; done
for j in 1 2 3; do ask $j judge-$j vote & done; wait
rm -rf "$root/B" "$root/C"
# review: two of the judges' trees, checked out at the winner, a reviewer in each
for r in 1 2; do
  git -C "$root/j$r" checkout -q --detach "$prefix/A"
  ask $r review-$r review &
done; wait
for j in 1 2 3; do git -C "$repo" worktree remove --force "$root/j$j"; done
"""


def shell_run(repo: Path, root: Path, n: int) -> float:
    """``SHELL_SCRIPT`` once; the CPU of the shell and of every process it started."""
    root.mkdir(parents=True)
    env = {
        **os.environ,
        "repo": str(repo),
        "root": str(root),
        "prefix": f"shell-{n}",
        "impl": implementer(0)[2],
        "judge": JUDGE,
    }
    kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(["sh", "-c", SHELL_SCRIPT], env=env, check=True)
    kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (kids1.ru_utime - kids0.ru_utime) + (kids1.ru_stime - kids0.ru_stime)


def shell_pairs(repo: Path, root: Path, pairs: int) -> list[tuple[float, float, float]]:
    """(magi's whole CPU as run by default, the same unjailed, the shell script's) per
    pair, alternated on the same repository.

    The default run is jailed: the panel shares one tree the jail makes read-only to each
    judge, where the script (which has no jail) gives each judge its own, as magi does
    unjailed. The jail's own processes count on magi's side. What the script does that
    magi does not: a `git fetch` of each candidate (magi writes its rescue commit straight
    into the repository when the seat wrote no git object: these agents run no git) and
    `git commit` where magi runs `commit-tree`.
    """
    out = []
    for i in range(pairs):
        run, own, kids = compete(repo, root / f"cmp-home{i}", config((0, 0, 0)), 50 + i)
        # The row says jailed: a machine without bubblewrap would run it unjailed quietly.
        mode = run.jail.mode if run.jail is not None else None
        assert mode == "bwrap", f"the default run was not jailed ({mode})"
        _, bare, bkids = compete(repo, root / f"cmp-off{i}", config((0, 0, 0), jail="off"), 50 + i)
        out.append((own + kids, bare + bkids, shell_run(repo, root / f"cmp-shell{i}", i)))
    return out


# What a seat turn costs magi, piece by piece: (label, module, qualified name). Thread CPU,
# inclusive (a record save inside the census counts in both).
PIECES = (
    ("the seat's jail (paths, policy)", "magi.seats.ask", "seat_jail"),
    ("the agent's spawn and wait", "magi.agents.process", "run"),
    ("guard before the turn", "magi.graph.guard", "CompetitionGuard.before"),
    ("guard after the turn", "magi.graph.guard", "CompetitionGuard.after"),
    ("census (record the process, sweep)", "magi.seats.census", "RecordingToken.register"),
    ("census (record the process, sweep)", "magi.seats.ask", "end_turn"),
    ("record saves", "magi.state.store", "Store.save"),
    ("artifacts (prompt, reply, raw)", "magi.state.store", "Store.write_artifact"),
    ("implementer hand-back (commit, fetch)", "magi.graph.implement", "hand_back"),
    ("a candidate's clone (prep)", "magi.graph.prep", "make_at"),
)


@contextmanager
def profiled() -> Iterator[dict[str, list[float]]]:
    """Wrap each of ``PIECES`` to add up its thread CPU (count, seconds) while inside."""
    spent: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    undo: list[Callable[[], None]] = []
    for label, module, qual in PIECES:
        owner: object = importlib.import_module(module)
        *path, name = qual.split(".")
        for part in path:
            owner = getattr(owner, part)
        original = getattr(owner, name)

        def timed(*a: object, _f: Callable[..., object] = original, _k: str = label, **kw: object):
            t0 = time.thread_time()
            try:
                return _f(*a, **kw)
            finally:
                entry = spent[_k]
                entry[0] += 1
                entry[1] += time.thread_time() - t0

        setattr(owner, name, functools.wraps(original)(timed))
        undo.append(lambda o=owner, n=name, f=original: setattr(o, n, f))
    try:
        yield spent
    finally:
        for u in reversed(undo):
            u()


def counted_processes() -> tuple[Callable[[], None], dict[str, int]]:
    """Count git processes and full checkouts while installed; returns (uninstall, counts)."""
    from magi.git import clones
    from magi.git.repo import Git

    counts = {"git processes": 0, "full checkouts": 0}
    lock = threading.Lock()
    exec_, add, make = Git._exec, Git.worktree_add, clones.make_at

    def _exec(self: Git, args: list[str], **kw: object) -> object:
        with lock:
            counts["git processes"] += 1
        return exec_(self, args, **kw)  # type: ignore[arg-type]

    def _add(self: Git, path: Path, **kw: object) -> None:
        with lock:
            counts["full checkouts"] += 1
        add(self, path, **kw)  # type: ignore[arg-type]

    def _make(*a: object, **kw: object) -> str:
        with lock:
            counts["full checkouts"] += 1
        return make(*a, **kw)  # type: ignore[arg-type]

    Git._exec, Git.worktree_add = _exec, _add  # type: ignore[method-assign]
    prep.make_at = _make  # type: ignore[assignment]

    def uninstall() -> None:
        Git._exec, Git.worktree_add = exec_, add  # type: ignore[method-assign]
        prep.make_at = make

    return uninstall, counts


def magi_prep(repo: Path, home: Path, cfg: Config, seed: int) -> float:
    """Wall time of magi's prep node alone (worktrees, labels, hooks) on a fresh run."""
    store = Store(home)
    run = engine.create(
        task="append the label",
        source="bench",
        config=cfg,
        git=Git.discover(repo),
        store=store,
        now=datetime.now(UTC),
        rng=random.Random(seed),
        seed=seed,
    )
    ctx = engine.context_for(run, store=store, environ=dict(os.environ))
    t0 = time.monotonic()
    prep.run(ctx)
    return time.monotonic() - t0


def prep_pairs(repo: Path, root: Path, pairs: int) -> list[float]:
    """magi's prep over raw clones (``RAW_CLONE``) x seats, timed in pairs, A B B A ...

    Each pair runs on the same repository state, one right after the other, so that a
    machine that slows down or speeds up between pairs moves both halves of a pair alike:
    the ratio holds where the absolute times do not. Which half goes first alternates:
    the second of two runs that each create six thousand files meets the first one's
    writeback, and a fixed order charged that to whichever side always came second.
    """
    cfg = config((0, 0, 0))
    ratios = []
    for i in range(pairs):
        n = cfg.graph.candidates
        if i % 2:
            b = raw_clones(repo, root / f"prep-raw{i}", n)
            a = magi_prep(repo, root / f"prep-home{i}", cfg, seed=100 + i)
        else:
            a = magi_prep(repo, root / f"prep-home{i}", cfg, seed=100 + i)
            b = raw_clones(repo, root / f"prep-raw{i}", n)
        ratios.append(a / b)
    return ratios


def median_interval(values: list[float], level: float = 0.9) -> tuple[float, float]:
    """A bootstrap interval of the median (percentile method, seeded): how far the figure
    itself could move on another night's run of the same pairs."""
    rng = random.Random(0)
    meds = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(2000))
    cut = int(len(meds) * (1 - level) / 2)
    return meds[cut], meds[-cut - 1]


def turn_profile(repo: Path, root: Path) -> tuple[list[tuple[str, int, float]], dict[str, int]]:
    """One competition under ``profiled`` and the process counts: per piece (label, calls,
    ms per seat turn), and the git processes and full checkouts of the run."""
    uninstall, counts = counted_processes()
    try:
        with profiled() as spent:
            run, _, _ = compete(repo, root / "profile-home", config((0, 0, 0)), seed=7)
    finally:
        uninstall()
    turns = len(run.turns)
    rows = [(k, int(n), 1000 * t / turns) for k, (n, t) in spent.items()]
    return sorted(rows, key=lambda r: -r[2]), {**counts, "seat turns": turns}


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="magi-bench-") as tmp:
        root = Path(tmp)
        repo = make_repo(root)
        cpu, kids = [], []
        for rep in range(REPS):
            run, c, k = compete(repo, root / f"home{rep}", config((0, 0, 0)), seed=rep)
            cpu.append(c)
            kids.append(k)
        shell = shell_pairs(repo, root, SHELL_PAIRS)
        pieces, counts = turn_profile(repo, root)

        ratios = prep_pairs(repo, root, PAIRS)
        waves, slowest = [], 1.5
        for rep in range(REPS):
            run, _, _ = compete(repo, root / f"sleep{rep}", config((0.5, 1.0, slowest)), seed=rep)
            waves.append(run.timings["implement"].seconds or 0.0)
        sent = {}
        for on in (True, False):
            home = root / f"sessions-{on}"
            run, _, _ = compete(repo, home, config((0, 0, 0), sessions=on), seed=1)
            sent[on] = bytes_sent(home, run)
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    m = statistics.median
    low, high = median_interval(ratios)
    whole = [a / c for a, _, c in shell]
    bare = [b / c for _, b, c in shell]
    rows = [
        (
            "magi CPU per competition",
            f"{m(cpu):.3f} s",
            f"{m(cpu) / m(kids):.2f}x of git+agents CPU ({m(kids):.2f} s)",
            "<= 0.2 s",
            m(cpu) <= 0.2,
        ),
        (
            "whole CPU vs the shell script",
            f"{m(a for a, _, _ in shell):.2f} s vs {m(c for _, _, c in shell):.2f} s",
            f"{m(whole):.2f}x (pairs {min(whole):.2f}x to {max(whole):.2f}x)",
            "<= 1.0x",
            m(whole) <= 1.0,
        ),
        (
            "the same unjailed (the script's trees)",
            f"{m(b for _, b, _ in shell):.2f} s vs {m(c for _, _, c in shell):.2f} s",
            f"{m(bare):.2f}x (pairs {min(bare):.2f}x to {max(bare):.2f}x)",
            "reported",
            None,
        ),
        (
            "prep vs raw clones",
            f"{len(ratios)} pairs, A B B A",
            f"{m(ratios):.2f}x (90% interval {low:.2f}x to {high:.2f}x)",
            "<= 1.1x",
            m(ratios) <= 1.1,
        ),
        (
            "implement wave vs slowest seat",
            f"{m(waves):.3f} s vs {slowest:.1f} s",
            f"{m(waves) / slowest:.3f}x",
            "<= 1.05x",
            m(waves) <= 1.05 * slowest,
        ),
        ("peak memory (max RSS)", f"{peak_mb:.0f} MB", "", "<= 200 MB", peak_mb <= 200),
        (
            "bytes sent, continued turns, on vs off",
            f"{sent[True][0]:,} B vs {sent[False][0]:,} B",
            f"{sent[True][0] / sent[False][0]:.2f}x",
            "<= 0.2x",
            sent[True][0] / sent[False][0] <= 0.2,
        ),
        (
            "bytes sent, first turns too, on vs off",
            f"{sum(sent[True]):,} B vs {sum(sent[False]):,} B",
            f"{sum(sent[True]) / sum(sent[False]):.2f}x "
            f"(first turns {sent[True][1]:,} B on, {sent[False][1]:,} B off)",
            "reported",
            None,
        ),
    ]
    print(
        f"magi bench, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.1f}, python {sys.version.split()[0]}, {FILES}-file repo, "
        f"median of {REPS}"
    )
    for name, value, ratio, goal, ok in rows:
        verdict = "" if ok is None else ("ok" if ok else "MISSED")
        print(f"  {name:<38} {value:<24} {ratio:<44} goal {goal:<18} {verdict}")
    print(
        f"  per seat turn ({counts['seat turns']} turns; {counts['git processes']} git "
        f"processes and {counts['full checkouts']} full checkouts per run), magi's own CPU:"
    )
    for label, calls, ms in pieces:
        print(f"    {label:<40} {ms:6.2f} ms  ({calls} calls)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
