"""``make bench``: what a competition costs magi itself, as ratios against in-process baselines.

1. magi's own CPU per competition (3 candidates, 3 judges, instant scripted agents, a
   generated 2,000-file repo), beyond git's and the agents' work (those are child processes,
   counted apart); goal <= 0.5 s.
2. prep wall time against raw ``git worktree add`` of as many worktrees; goal <= 1.1x.
3. implement-wave wall time against the slowest seat, agents that sleep; goal <= 1.05x + 0.2 s.
4. peak memory (max RSS) of this process over the competitions; goal <= 200 MB.
5. bytes of prompt sent to agents after the first judgement (deliberation, votes, review,
   fix) with sessions on against ``graph.sessions = false``. The goal, <= 0.2x, is judged
   on the continued turns (a seat's second turn on: deliberation, votes, the fixer, a
   reviewer's later rounds), since what it measures is that a continued conversation is
   sent only the new turn. A seat's first turn (each reviewer's) opens its conversation and
   carries the patch with sessions on or off, byte for byte: the total including those is
   reported beside it, with no goal of its own.

Every competition runs the default graph through the review loop: 2 reviewers, 1 round.

Absolute times on a noisy machine do not hold; the ratios do. Each figure is the median of
a few repetitions.
"""

from __future__ import annotations

import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from magi import engine
from magi.config.model import Config
from magi.demo import commit
from magi.git import Git
from magi.graph import prep
from magi.state.model import Run, RunStatus
from magi.state.store import Store

REPS = 3
PAIRS = 7
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
    return repo


def config(sleeps: tuple[float, float, float], *, sessions: bool = True) -> Config:
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


def raw_worktrees(repo: Path, root: Path, n: int) -> float:
    t0 = time.monotonic()
    for i in range(n):
        subprocess.run(
            [
                "git",
                "worktree",
                "add",
                "-q",
                "-b",
                f"bench-{root.name}-{i}",
                str(root / f"w{i}"),
                "main",
            ],
            cwd=repo,
            check=True,
        )
    return time.monotonic() - t0


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
    """magi's prep over raw `git worktree add` x seats, timed alternately (A B A B ...).

    Each pair runs on the same repository state, one right after the other, so that a
    machine that slows down or speeds up between pairs moves both halves of a pair alike:
    the ratio holds where the absolute times do not.
    """
    cfg = config((0, 0, 0))
    ratios = []
    for i in range(pairs):
        a = magi_prep(repo, root / f"prep-home{i}", cfg, seed=100 + i)
        b = raw_worktrees(repo, root / f"prep-raw{i}", cfg.graph.candidates)
        ratios.append(a / b)
    return ratios


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="magi-bench-") as tmp:
        root = Path(tmp)
        repo = make_repo(root)
        cpu, kids = [], []
        for rep in range(REPS):
            run, c, k = compete(repo, root / f"home{rep}", config((0, 0, 0)), seed=rep)
            cpu.append(c)
            kids.append(k)

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
    rows = [
        (
            "magi CPU per competition",
            f"{m(cpu):.3f} s",
            f"{m(cpu) / m(kids):.2f}x of git+agents CPU ({m(kids):.2f} s)",
            "<= 0.5 s",
            m(cpu) <= 0.5,
        ),
        (
            "prep vs raw worktree add",
            f"{len(ratios)} alternated pairs",
            f"{m(ratios):.2f}x (pairs {min(ratios):.2f}x to {max(ratios):.2f}x)",
            "<= 1.1x",
            m(ratios) <= 1.1,
        ),
        (
            "implement wave vs slowest seat",
            f"{m(waves):.3f} s vs {slowest:.1f} s",
            f"{m(waves) / slowest:.3f}x",
            "<= 1.05x + 0.2 s",
            m(waves) <= 1.05 * slowest + 0.2,
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
        f"magi bench, {datetime.now(UTC):%Y-%m-%d}, {os.cpu_count()} cores, "
        f"python {sys.version.split()[0]}, {FILES}-file repo, median of {REPS}"
    )
    for name, value, ratio, goal, ok in rows:
        verdict = "" if ok is None else ("ok" if ok else "MISSED")
        print(f"  {name:<38} {value:<24} {ratio:<44} goal {goal:<18} {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
