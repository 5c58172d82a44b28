"""Do winners stay merged? Fates read from a real base branch: stayed, reverted, gone, settling."""

from __future__ import annotations

import subprocess
from datetime import timedelta
from pathlib import Path

from magi.core.figures.afterlife import Commit, fates, history
from magi.core.figures.stats import FLOOR, as_json, compute, render
from magi.engine.afterlife import read_fates
from magi.model.review import MergeRecord
from magi.model.run import JudgeSeat, Task, Vote
from stats_helpers import AT, base, cand, tally

IDENT = ["-c", "user.name=t", "-c", "user.email=t@t"]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *IDENT, "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def squash(repo: Path, name: str, run_id: str) -> str:
    (repo / name).write_text(name)
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", f"add {name}\n\nmagi run {run_id} (candidate A, b/A)")
    return git(repo, "rev-parse", "HEAD")


def run_of(run_id: str, repo: Path, commit: str, days_ago: int, source: str = "cli"):
    return base(
        run_id,
        {"impl-A": "opus", "impl-B": "sonnet", "judge-1": "j1", "judge-2": "j2"},
        repo=str(repo),
        created_at=AT - timedelta(days=days_ago, hours=1),
        task=Task(original="t", cleaned="t", source=source),
        candidates=[cand("A"), cand("B")],
        judges=[
            JudgeSeat(seat="judge-1", order=["A", "B"]),
            JudgeSeat(seat="judge-2", order=["B", "A"]),
        ],
        votes=[
            Vote(seat="judge-1", status="ok", vote="A"),
            Vote(seat="judge-2", status="ok", vote="B"),
        ],
        tally=tally("A"),
        merge=MergeRecord(
            mode="local",
            result="merged",
            commit=commit,
            base="main",
            at=AT - timedelta(days=days_ago),
        ),
    )


def test_fates_from_a_real_history(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "README").write_text("x")
    git(repo, "add", "README")
    git(repo, "commit", "-q", "-m", "start")
    kept = squash(repo, "kept", "r1")
    undone = squash(repo, "undone", "r2")
    git(repo, "revert", "--no-edit", undone)  # "This reverts commit <sha>."
    fresh = squash(repo, "fresh", "r3")
    followed = squash(repo, "followed", "r4")
    git(repo, "checkout", "-q", "-b", "side")
    rewritten = squash(repo, "rewritten", "r5")  # a commit the base no longer holds
    git(repo, "checkout", "-q", "main")
    runs = [
        run_of("20261101-000000-0001", repo, kept, 20),
        run_of("20261101-000000-0002", repo, undone, 20),
        run_of("20261101-000000-0003", repo, fresh, 1),
        run_of("20261101-000000-0004", repo, followed, 15, source="issue:5"),
        run_of("20261101-000000-0005", repo, rewritten, 15),  # rewritten away
        run_of("20261101-000000-0007", repo, "f" * 40, 15),  # merged on GitHub, not fetched
        # the follow-up on issue 5, started after #4 landed (its own merge never happened)
        base(
            "20261101-000000-0006",
            {"impl-A": "sonnet", "impl-B": "opus"},
            repo=str(repo),
            created_at=AT - timedelta(days=10),
            task=Task(original="t", cleaned="t", source="issue:5"),
            candidates=[cand("A"), cand("B")],
            judges=[],
            votes=[],
            tally=tally("A"),
        ),
    ]
    got = read_fates(runs, now=AT, settle_days=7)
    assert got == {
        "20261101-000000-0001": ("stayed", False),
        "20261101-000000-0002": ("reverted", False),
        "20261101-000000-0003": ("settling", False),
        "20261101-000000-0004": ("stayed", True),
        "20261101-000000-0005": ("gone", False),
        "20261101-000000-0007": (None, False),  # not known here: not counted as gone
    }
    s = compute(runs, got)
    out = as_json(s)["afterlife"]
    assert out["merged"]["opus"] == {"value": 1.0, "count": 6, "total": 6, "runs": 6}
    assert out["merged"]["sonnet"]["count"] == 0  # its one win never merged
    assert out["stayed_merged"]["opus"]["count"] == 2  # of 4 settled: one reverted, one gone
    # the same issue number in another repository is another issue: no follow-up there
    other = run_of("20261101-000000-0009", repo, kept, 20, source="issue:5")
    other = other.model_copy(update={"repo": str(tmp_path / "elsewhere")})
    assert read_fates([other, runs[-1]], now=AT, settle_days=7)[other.id] == (None, False)
    assert out["stayed_merged"]["opus"]["total"] == 4
    assert out["needed_follow_up"]["opus"]["count"] == 1
    judged = as_json(s)["judging"]["picked_winner_stayed_merged"]
    assert judged["j1"]["total"] == 4  # j1 voted for every winner
    assert "j2" not in judged  # j2 never picked a winner
    text = render(s)
    assert "do winners stay merged?" in text
    assert "sonnet" in text


def test_a_rate_on_too_few_runs_says_so() -> None:
    h = history([Commit("a" * 40, "x")])
    assert fates([], h, now=AT, settle_days=7) == {}
    from magi.core.figures.stats import Ratio

    r = Ratio()
    for i in range(FLOOR - 1):
        r.add(f"r{i}", True)
    assert r.text(FLOOR).startswith("too few runs (2/2")


def test_a_revert_counts_only_after_the_squash() -> None:
    """By sha or by subject, newest first: a revert older than the squash reverts something
    else that had the same subject."""
    squash_sha, older, newer = "c" * 40, "d" * 40, "b" * 40
    h = history(
        [
            Commit(newer, 'Revert "add kept"\n\nreasons'),
            Commit(squash_sha, "add kept\n\nmagi run r1 (candidate A, b/A)"),
            Commit(older, 'Revert "add other"\n\nThis reverts commit ' + "e" * 40 + "."),
        ]
    )
    assert h.reverts(squash_sha, "add kept")
    assert not h.reverts(squash_sha, "add other")
    h2 = history(
        [
            Commit(squash_sha, "add kept"),
            Commit(older, 'Revert "add kept"\n\nThis reverts commit ' + squash_sha[:12] + "."),
        ]
    )
    assert not h2.reverts(squash_sha, "add kept")
