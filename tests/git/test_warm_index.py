"""A clone's index refreshed while its seat works (``magi.git.warm_index``): what the
hand-back stages from it is what ``add -A`` stages from the seat's own, and nothing the
seat can reach is run, trusted or waited on."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from magi.git import clones, warm_index
from magi.git.repo import Git
from magi.git.warm_index import WarmIndex, place

BRANCH = "magi/20261205-050000-cafe/A"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "x")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "x@example.invalid")


def sh(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


class Manual:
    """A timer that fires when the test says: the seat's turn, at the instant chosen."""

    def __init__(self, delay: float, fn: Callable[[], None]) -> None:
        self.delay, self.fn, self.cancelled = delay, fn, False

    def start(self) -> None:
        pass

    def cancel(self) -> None:
        self.cancelled = True

    def fire(self) -> None:
        self.fn()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    for i in range(20):
        (repo / f"f{i}.txt").write_text(f"line {i}\n")
    sh(repo, "add", "-A")
    sh(repo, "commit", "-q", "-m", "i")
    out = tmp_path / "wt" / "A"
    clones.make(Git(repo), out, branch=BRANCH, start="main")
    return out


def warmed(tree: Path) -> tuple[WarmIndex, Manual, Git]:
    own = clones.git_of(Git(tree.parent.parent / "repo"), tree)
    config = (tree / ".git" / "config").read_bytes()
    timers: list[Manual] = []
    warm = WarmIndex(own, tree, config)
    warm.start(timer=lambda delay, fn: timers.append(Manual(delay, fn)) or timers[-1])
    return warm, timers[0], own


def test_the_copy_stages_what_the_seat_changed_and_becomes_the_clones_index(tree: Path) -> None:
    warm, timer, own = warmed(tree)
    assert 0 <= timer.delay <= 1.1  # the rest of the second the checkout was written in
    (tree / "f1.txt").write_text("changed before the refresh\n")
    timer.fire()
    # After it: the same size as before, in the second the copy was written (racy for git).
    (tree / "f2.txt").write_text("line X\n")
    (tree / "new.txt").write_text("new\n")
    (tree / "f3.txt").unlink()
    index = warm.take()
    assert index is not None
    assert index.parent == place(tree)
    made = own.commit_all(tree, "rescued", index=index)
    assert made is not None
    warm.install()
    assert not place(tree).exists()
    assert sh(tree, "show", "HEAD:f1.txt") == "changed before the refresh"
    assert sh(tree, "show", "HEAD:f2.txt") == "line X"
    assert sh(tree, "show", "HEAD:new.txt") == "new"
    assert "f3.txt" not in sh(tree, "ls-tree", "--name-only", "HEAD").split()
    # The clone's index is the commit, as `add -A` on its own would have left it.
    assert sh(tree, "status", "--porcelain") == ""
    assert sh(tree, "diff", "--cached", "--name-only", "HEAD") == ""


def test_a_seat_that_ran_git_keeps_its_own_index(tree: Path) -> None:
    """`git add -f` of an ignored file is staged in the seat's index, which the copy does
    not hold: the copy is dropped and the seat's own index committed."""
    warm, timer, own = warmed(tree)
    timer.fire()
    (tree / ".gitignore").write_text("*.log\n")
    (tree / "kept.log").write_text("forced\n")
    sh(tree, "add", "-f", "kept.log")
    assert warm.take() is None
    assert not place(tree).exists()
    own.commit_all(tree, "rescued")
    assert sh(tree, "show", "HEAD:kept.log") == "forced"


def test_the_refresh_never_runs_what_the_seats_config_names(tree: Path) -> None:
    """A filter driver the seat adds to its clone's config mid-turn would be a program run
    by the refresh (outside any jail): the refresh reads magi's copy of the config."""
    warm, timer, _ = warmed(tree)
    marker = tree.parent / "ran"
    with (tree / ".git" / "config").open("a") as f:
        f.write(f'[filter "x"]\n\tclean = touch {marker}; cat\n')
    (tree / ".gitattributes").write_text("* filter=x\n")
    (tree / "f1.txt").write_text("changed\n")  # a file the refresh must read
    timer.fire()
    assert warm.take() is not None
    assert not marker.exists()
    # The control: git with the clone's own config runs it on the same refresh.
    sh(tree, "update-index", "-q", "--refresh")
    assert marker.exists()


def test_a_turn_that_ends_within_the_second_leaves_no_copy(tree: Path) -> None:
    warm, timer, _ = warmed(tree)
    assert warm.take() is None
    assert timer.cancelled
    timer.fire()  # a timer that fires after all does nothing
    assert not place(tree).exists()


@pytest.mark.parametrize("swap", ["link", "fifo"])
def test_what_is_not_the_index_noted_before_the_turn_is_refused(tree: Path, swap: str) -> None:
    """Neither followed nor waited on: a link to the index, or a fifo put in its place."""
    warm, timer, _ = warmed(tree)
    real = tree / ".git" / "index"
    if swap == "link":
        real.rename(real.with_name("index.moved"))
        real.symlink_to("index.moved")
    else:
        real.unlink()
        os.mkfifo(real)
    timer.fire()
    assert warm.take() is None
    assert not place(tree).exists()


def test_a_copy_a_killed_run_left_is_made_again(tree: Path) -> None:
    (place(tree) / "git" / "objects").mkdir(parents=True)
    (place(tree) / "index").write_bytes(b"stale")
    warm, timer, _ = warmed(tree)
    timer.fire()
    index = warm.take()
    assert index is not None
    assert index.read_bytes()[:4] == b"DIRC"


def test_a_file_rewritten_in_the_second_of_the_index_is_read_again(tree: Path) -> None:
    """git reads a file whose stamp is not older than the index it reads. The index and its
    files stamped in one second (as a checkout writes them), then a file rewritten in place,
    same size, same stamp, in that second: only the copy keeping the index's own time makes
    git read it (ctime is not trusted here, so that rule alone guards it)."""
    sh(tree, "config", "core.trustctime", "false")
    second = (time.time_ns() // 10**9 - 10) * 10**9 + 5 * 10**8  # a second now past
    for f in tree.glob("f*.txt"):
        os.utime(f, ns=(second, second))
    sh(tree, "update-index", "-q", "--refresh")  # the entries record that second
    os.utime(tree / ".git" / "index", ns=(second, second))
    warm, timer, own = warmed(tree)
    (tree / "f2.txt").write_text("LINE 2\n")  # "line 2\n" before: the same size
    os.utime(tree / "f2.txt", ns=(second, second))
    timer.fire()
    index = warm.take()
    assert index is not None
    assert own.commit_all(tree, "rescued", index=index) is not None
    warm.install()
    assert sh(tree, "show", "HEAD:f2.txt") == "LINE 2"
    assert sh(tree, "status", "--porcelain") == ""


def test_a_file_rewritten_while_the_refresh_read_it_is_read_again(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refresh reads a file the seat wrote in the second the refresh began in; the seat
    rewrites it in that second, same size, after the read. The copy is stamped as of the
    refresh's start, so git reads that file again at the hand-back."""
    sh(tree, "config", "core.trustctime", "false")
    warm, timer, own = warmed(tree)
    began = (time.time_ns() // 10**9 - 10) * 10**9  # the second the refresh begins in
    monkeypatch.setattr(warm_index, "_clock", lambda: began / 1e9 + 0.5)
    f2 = tree / "f2.txt"
    f2.write_text("line 2\n")  # the seat's first write: what it was
    os.utime(f2, ns=(began + 3 * 10**8, began + 3 * 10**8))
    timer.fire()
    f2.write_text("LINE 2\n")  # and its second, after the refresh read the first
    os.utime(f2, ns=(began + 3 * 10**8, began + 3 * 10**8))
    index = warm.take()
    assert index is not None
    assert own.commit_all(tree, "rescued", index=index) is not None
    assert sh(tree, "show", "HEAD:f2.txt") == "LINE 2"


@pytest.mark.parametrize("how", ["new", "ignored", "nested", "changed", "gone"])
def test_a_changed_gitattributes_is_seen_against_the_copy(tree: Path, how: str) -> None:
    """The hand-back then stages into the clone's own index (``handback``), as before
    there was a copy: a .gitattributes in a folder of a tracked file or above it, new (an
    ignored one applies too), changed or removed."""
    repo = tree.parent.parent / "repo"
    (repo / "sub").mkdir()
    (repo / "sub" / "g.txt").write_text("g\n")
    (repo / ".gitattributes").write_text("*.bin binary\n")
    sh(repo, "add", "-A")
    sh(repo, "commit", "-q", "-m", "attrs")
    sh(tree, "fetch", "-q", str(repo), "main")
    sh(tree, "reset", "-q", "--hard", "FETCH_HEAD")
    warm, timer, _ = warmed(tree)
    timer.fire()
    (tree / "untracked.txt").write_text("not about attributes\n")
    assert not warm.attributes_changed()
    if how == "new":
        (tree / "sub" / ".gitattributes").write_text("*.txt text\n")
    elif how == "ignored":
        (tree / ".gitignore").write_text(".gitattributes\n")
        (tree / "sub" / ".gitattributes").write_text("*.txt text\n")
    elif how == "nested":
        (tree / "sub" / "deeper").mkdir()
        (tree / "sub" / "deeper" / ".gitattributes").write_text("*.txt text\n")
    elif how == "changed":
        (tree / ".gitattributes").write_text("*.txt text\n")
    else:
        (tree / ".gitattributes").unlink()
    expected = how != "nested"  # a folder no tracked file is in: only new files, read anyway
    assert warm.attributes_changed() is expected


def test_a_copy_that_cannot_be_put_in_place_leaves_the_index_of_the_commit(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    warm, timer, own = warmed(tree)
    timer.fire()
    (tree / "f1.txt").write_text("changed\n")
    index = warm.take()
    assert index is not None
    assert own.commit_all(tree, "rescued", index=index) is not None

    def refused(*_: object) -> None:
        raise OSError("refused")

    monkeypatch.setattr(warm_index.os, "replace", refused)
    monkeypatch.setattr(warm_index.shutil, "copyfile", refused)
    warm.install()
    assert sh(tree, "status", "--porcelain") == ""
    assert not place(tree).exists()
