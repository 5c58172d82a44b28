"""The git adapter, against real repositories: worktrees, neutral commits, diffs, lockdown."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from magi.errors import RepoError
from magi.git.repo import NEUTRAL_EMAIL, NEUTRAL_NAME, Git


def _real_hook() -> str | None:
    """magi's own trailer-stripping hook, when its module is present."""
    try:
        from magi.core.compete.blind import COMMIT_MSG_HOOK
    except ImportError:
        return None
    return COMMIT_MSG_HOOK


TRIVIAL_HOOK = """#!/bin/sh
grep -v -i '^co-authored-by:' "$1" > "$1.tmp"
mv "$1.tmp" "$1"
"""
TRAILER = "Co-Authored-By: Some Model <model@vendor.example>"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No global or system git config of the machine running the tests; an agent identity."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for who in ("AUTHOR", "COMMITTER"):  # what an agent's own commits are made as
        monkeypatch.setenv(f"GIT_{who}_NAME", "Agent Smith")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "smith@vendor.example")


def agent_git(cwd: Path, *args: str) -> str:
    """git as an agent runs it: plain, honouring every hook and config it finds."""
    res = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return res.stdout


def commit_file(cwd: Path, name: str, text: str, message: str = "change") -> None:
    (cwd / name).write_text(text)
    agent_git(cwd, "add", "-A")
    agent_git(cwd, "commit", "-q", "-m", message)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    agent_git(tmp_path, "init", "-q", "-b", "main", str(path))
    commit_file(path, "README.md", "hello\n", "initial")
    return path


@pytest.fixture
def git(repo: Path) -> Git:
    return Git(repo)


def plant_marker_script(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """An executable that proves it ran by creating a marker file."""
    marker = tmp_path / f"{name}.ran"
    script = tmp_path / f"{name}.sh"
    script.write_text(f"#!/bin/sh\ntouch '{marker}'\n")
    script.chmod(0o755)
    return script, marker


# -- discovery and refs -----------------------------------------------------------------


def test_discover_finds_the_main_worktree_from_anywhere(repo: Path, git: Git) -> None:
    """From a subdirectory or a linked worktree, root is the main worktree's toplevel."""
    (repo / "sub").mkdir()
    assert Git.discover(repo / "sub").root == repo.resolve()
    wt = repo.parent / "wt"
    git.worktree_add(wt, start="main", branch="magi/r1/A")
    assert Git.discover(wt).root == repo.resolve()
    assert git.common_dir() == (repo / ".git").resolve()


def _spy_git(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every git command a ``Git`` runs from now on."""
    ran: list[list[str]] = []
    real = Git._exec

    def spy(self: Git, args: list[str], **kw: object) -> object:
        ran.append(args)
        return real(self, args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Git, "_exec", spy)
    return ran


def test_discover_learns_the_layout_every_git_of_the_root_reuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The common directory and object format come with discovery's own call: a ``Git`` of
    the same root (a run's context makes its own) asks git for neither again."""
    for fmt in ("sha1", "sha256"):
        path = tmp_path / fmt
        agent_git(tmp_path, "init", "-q", f"--object-format={fmt}", "-b", "main", str(path))
        commit_file(path, "README.md", "hello\n", "initial")
        wt = tmp_path / f"{fmt}-wt"
        Git(path).worktree_add(wt, start="main", branch="magi/r1/A")
        Git.discover(wt)
        with monkeypatch.context() as m:
            ran = _spy_git(m)  # type: ignore[arg-type]
            again = Git(path)
            again.layout()
            assert (again.common_dir(), again.object_format()) == ((path / ".git").resolve(), fmt)
            assert ran == []


def test_layout_is_one_git_call_when_unknown(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A root discovery never saw: one process for both answers, then none."""
    ran = _spy_git(monkeypatch)
    git = Git(repo)
    git.layout()
    git.layout()
    assert (git.common_dir(), git.object_format()) == ((repo / ".git").resolve(), "sha1")
    assert len(ran) == 1


def test_discover_outside_a_repository_raises(tmp_path: Path) -> None:
    """A plain directory is a RepoError that names it."""
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(RepoError, match="not a git repository"):
        Git.discover(plain)


def test_default_base(repo: Path, git: Git) -> None:
    """The current branch; main when HEAD is detached; an error with neither."""
    agent_git(repo, "switch", "-q", "-c", "feature")
    assert git.default_base() == "feature"
    agent_git(repo, "switch", "-q", "--detach")
    assert git.current_branch() is None
    assert git.default_base() == "main"
    agent_git(repo, "branch", "-q", "-m", "main", "trunk")
    with pytest.raises(RepoError, match="no base branch"):
        git.default_base()


def test_is_dirty_sees_untracked_and_modified_files(repo: Path, git: Git) -> None:
    """Clean is clean; an untracked file or an edit to a tracked one is dirty."""
    assert not git.is_dirty()
    (repo / "new.txt").write_text("x")
    assert git.is_dirty()
    (repo / "new.txt").unlink()
    (repo / "README.md").write_text("changed\n")
    assert git.is_dirty()


def test_repo_errors_name_the_command(git: Git) -> None:
    """A failed command is quoted in the error, with git's own stderr."""
    with pytest.raises(RepoError, match="rev-parse") as unknown:
        git.rev_parse("no-such-ref")
    assert "no-such-ref" in str(unknown.value)
    with pytest.raises(RepoError, match=r"git frobnicate .*failed.*not a git command"):
        git.run("frobnicate", "--now")
    with pytest.raises(RepoError, match="not a revision"):
        git.rev_parse("--output=/tmp/x")
    assert git.run("frobnicate", check=False) == ""


def test_callers_git_environment_does_not_redirect(
    repo: Path, git: Git, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIT_DIR / GIT_WORK_TREE / GIT_INDEX_FILE in magi's own environment are ignored."""
    other = tmp_path / "other"
    agent_git(tmp_path, "init", "-q", "-b", "main", str(other))
    commit_file(other, "other.txt", "other\n")
    (other / "dirt").write_text("x")
    mine = agent_git(repo, "rev-parse", "HEAD").strip()
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    assert git.rev_parse("HEAD") == mine
    assert not git.is_dirty()


# -- worktrees and branches -------------------------------------------------------------


def test_worktree_add_names_the_branch_after_the_label(repo: Path, git: Git) -> None:
    """A candidate worktree sits on magi/<run>/<label>, started at the base."""
    wt = repo.parent / "wt-A"
    git.worktree_add(wt, start="main", branch="magi/r1/A")
    git.worktree_add(repo.parent / "wt-B", start="main", branch="magi/r1/B")
    agent_git(repo, "branch", "-q", "magi/r10/A")  # another run whose id shares a prefix
    assert git.branches("magi/r1/") == ["magi/r1/A", "magi/r1/B"]
    assert agent_git(wt, "symbolic-ref", "HEAD").strip() == "refs/heads/magi/r1/A"
    assert git.head(wt) == git.rev_parse("main")
    assert wt.resolve() in git.worktrees()
    assert git.worktrees()[0] == repo.resolve()


def test_worktree_add_refuses_an_existing_branch(repo: Path, git: Git) -> None:
    """Reusing a branch would hand a candidate someone else's history."""
    agent_git(repo, "branch", "magi/r1/A")
    with pytest.raises(RepoError, match="magi/r1/A already exists"):
        git.worktree_add(repo.parent / "wt", start="main", branch="magi/r1/A")
    assert not (repo.parent / "wt").exists()


def test_detached_worktree_for_a_judge(repo: Path, git: Git) -> None:
    """Without a branch the worktree is detached at the start commit."""
    wt = repo.parent / "judge-1"
    sha = git.rev_parse("main")
    git.worktree_add(wt, start=sha)
    assert git.head(wt) == sha
    res = subprocess.run(["git", "symbolic-ref", "-q", "HEAD"], cwd=wt, check=False)
    assert res.returncode == 1
    assert git.branches("") == ["main"]


def test_worktree_remove_and_delete_branch_tolerate_what_is_gone(repo: Path, git: Git) -> None:
    """A worktree whose directory is already gone is pruned; a missing branch is no error."""
    kept, gone = repo.parent / "kept", repo.parent / "gone"
    git.worktree_add(kept, start="main", branch="magi/r1/A")
    git.worktree_add(gone, start="main", branch="magi/r1/B")
    (kept / "scratch.txt").write_text("uncommitted")
    shutil.rmtree(gone)
    git.worktree_remove(kept)
    git.worktree_remove(gone)
    assert git.worktrees() == [repo.resolve()]
    assert not kept.exists()
    git.delete_branch("magi/r1/A")
    git.delete_branch("magi/r1/B")
    git.delete_branch("magi/r1/never-existed")
    assert git.branches("magi/") == []


def test_worktree_from_a_remote_branch_writes_no_tracking_config(
    tmp_path: Path, repo: Path
) -> None:
    """--no-track: starting at origin/main must not add branch.* keys to the shared config."""
    remote = tmp_path / "remote.git"
    agent_git(tmp_path, "clone", "-q", "--bare", str(repo), str(remote))
    clone = tmp_path / "clone"
    agent_git(tmp_path, "clone", "-q", str(remote), str(clone))
    git = Git(clone)
    before = (clone / ".git" / "config").read_bytes()
    git.worktree_add(tmp_path / "wt", start="origin/main", branch="magi/r1/A")
    assert (clone / ".git" / "config").read_bytes() == before
    assert git.head(tmp_path / "wt") == git.rev_parse("origin/main")


# -- commits ----------------------------------------------------------------------------


def test_commit_all_uses_the_neutral_identity(repo: Path, git: Git) -> None:
    """Author and committer are both magi's, whatever identity the environment carries."""
    wt = repo.parent / "wt"
    git.worktree_add(wt, start="main", branch="magi/r1/A")
    (wt / "work.py").write_text("print('hi')\n")
    made = git.commit_all(wt, "rescued work")
    assert made is not None
    assert (made.sha, made.message) == (git.head(wt), "rescued work")
    who = agent_git(wt, "log", "-1", "--format=%an|%ae|%cn|%ce|%s").strip()
    assert who == f"{NEUTRAL_NAME}|{NEUTRAL_EMAIL}|{NEUTRAL_NAME}|{NEUTRAL_EMAIL}|rescued work"
    neutral = f"{NEUTRAL_NAME} <{NEUTRAL_EMAIL}>"
    assert git.commit_texts("main", "magi/r1/A") == (["rescued work"], [neutral])


def test_commit_all_on_a_clean_tree_returns_none(repo: Path, git: Git) -> None:
    """Nothing to commit is not an error, and makes no commit."""
    head = git.head(repo)
    assert git.commit_all(repo, "nothing") is None
    assert git.head(repo) == head


REAL_HOOK = _real_hook()
HOOKS = [
    pytest.param(TRIVIAL_HOOK, id="trivial"),
    pytest.param(
        REAL_HOOK,
        id="magi.core.compete.blind",
        marks=pytest.mark.skipif(
            REAL_HOOK is None, reason="magi.core.compete.blind not importable"
        ),
    ),
]


@pytest.mark.parametrize("script", HOOKS)
def test_commit_msg_hook_strips_trailers_in_that_worktree_only(
    repo: Path, git: Git, tmp_path: Path, script: str
) -> None:
    """The agent's plain `git commit` in its worktree loses the trailer; main keeps it."""
    wt = repo.parent / "wt"
    git.worktree_add(wt, start="main", branch="magi/r1/A")
    git.install_commit_msg_hook(wt, tmp_path / "magi-hooks", script)
    message = f"add feature\n\n{TRAILER}\n"
    commit_file(wt, "feature.py", "x = 1\n", message)
    assert "Co-Authored-By" not in agent_git(wt, "log", "-1", "--format=%B")
    assert git.commit_messages("main", "magi/r1/A") == ["add feature"]
    commit_file(repo, "main.py", "y = 2\n", message)
    assert TRAILER in agent_git(repo, "log", "-1", "--format=%B")


def test_commit_all_strips_trailers_and_runs_no_hook(repo: Path, tmp_path: Path) -> None:
    """Rescued work never carries a trailer, though no hook runs: magi strips it itself."""
    hooks = tmp_path / "magi-hooks"
    git = Git(repo, hooks_dir=hooks)
    script, marker = plant_marker_script(tmp_path, "hook")
    git.install_commit_msg_hook(repo, hooks, script.read_text())
    (repo / "a.txt").write_text("a")
    assert git.commit_all(repo, f"rescued\n\n{TRAILER}")
    assert agent_git(repo, "log", "-1", "--format=%B").strip() == "rescued"
    assert not marker.exists()
    assert git.commit_all(repo, "again") is None  # the index and HEAD agree now
    assert agent_git(repo, "status", "--porcelain") == ""


def test_span_log_reads_a_branch_in_one_call(repo: Path, git: Git) -> None:
    """Commits oldest first with their messages, the head first whatever the dates say,
    and whether the branch descends from the base: a merge of it does, an orphan does not."""
    base = git.rev_parse("HEAD")
    commit_file(repo, "a.txt", "a\n", "first\n\nwith a body")
    env = {
        **os.environ,
        "GIT_COMMITTER_DATE": "2001-01-01T00:00:00",
        "GIT_AUTHOR_DATE": "2001-01-01T00:00:00",
    }
    subprocess.run(
        ["git", "commit", "-q", "--allow-empty", "-m", "older date"], cwd=repo, env=env, check=True
    )
    head = git.rev_parse("HEAD")
    span = git.span_log(base, "HEAD")
    assert span.head == head
    assert span.descends
    assert [m for _, m in span.commits] == ["first\n\nwith a body", "older date"]
    at_base = git.span_log(base, base)
    assert (at_base.head, at_base.commits, at_base.descends) == (base, [], True)
    behind = git.span_log(head, base)  # the base's own ancestor: no commits, not descending
    assert (behind.head, behind.commits, behind.descends) == (base, [], False)
    agent_git(repo, "checkout", "-q", "--orphan", "other")
    commit_file(repo, "o.txt", "o\n", "orphan")
    orphan = git.span_log(base, "other")
    assert [m for _, m in orphan.commits] == ["orphan"]
    assert not orphan.descends
    agent_git(repo, "checkout", "-q", "main")
    agent_git(repo, "merge", "-q", "--allow-unrelated-histories", "-m", "merge", "other")
    merged = git.span_log(base, "main")
    assert merged.descends
    assert merged.head == git.rev_parse("main")
    assert len(merged.commits) == 4
    # An annotated tag at either end is the commit it points at, never the tag object.
    agent_git(repo, "tag", "-a", "-m", "at base", "base-tag", base)
    tagged = git.span_log("base-tag", "main")
    assert tagged.descends
    assert len(tagged.commits) == 4
    assert git.span_log("base-tag", "base-tag") == type(at_base)(
        head=base, commits=[], descends=True
    )


def test_planted_hooks_do_not_run_under_magi(repo: Path, tmp_path: Path) -> None:
    """post-commit and post-checkout planted in .git/hooks run for plain git, never for magi."""
    script, marker = plant_marker_script(tmp_path, "hook")
    for name in ("post-commit", "post-checkout"):
        shutil.copy(script, repo / ".git" / "hooks" / name)
    commit_file(repo, "a.txt", "a")  # the control: the planted hook is live
    assert marker.exists()
    marker.unlink()
    git = Git(repo, hooks_dir=tmp_path / "magi-hooks")
    (repo / "b.txt").write_text("b")
    assert git.commit_all(repo, "rescued")
    git.worktree_add(tmp_path / "wt", start="main", branch="magi/r1/A")
    assert not marker.exists()


def test_planted_fsmonitor_does_not_run_under_magi(repo: Path, git: Git, tmp_path: Path) -> None:
    """core.fsmonitor in the shared config is a program git would run on status; magi's never."""
    script, marker = plant_marker_script(tmp_path, "fsmonitor")
    agent_git(repo, "config", "core.fsmonitor", str(script))
    agent_git(repo, "status", "--porcelain")  # the control: plain git runs it
    assert marker.exists()
    marker.unlink()
    (repo / "c.txt").write_text("c")
    assert git.is_dirty()
    assert git.commit_all(repo, "rescued")
    git.numstat("main~1", "main")
    assert not marker.exists()


# -- history and diffs ------------------------------------------------------------------


def test_history_readers(repo: Path, git: Git) -> None:
    """Counts, messages oldest first, touched paths (both sides of a rename), identities:
    each author and committer once, a message's NUL-free body whole whatever it holds."""
    base = git.rev_parse("HEAD")
    commit_file(repo, "a.txt", "a\n", "first\n\nwith a body")
    agent_git(repo, "mv", "README.md", "DOCS.md")
    agent_git(repo, "commit", "-q", "-m", "second")
    assert git.commit_count(base, "HEAD") == 2
    assert git.commit_messages(base, "HEAD") == ["first\n\nwith a body", "second"]
    assert git.numstat_touched(base, "HEAD")[1] == ["DOCS.md", "README.md", "a.txt"]
    smith = "Agent Smith <smith@vendor.example>"
    assert git.commit_texts(base, "HEAD") == (["first\n\nwith a body", "second"], [smith])
    (repo / "b.txt").write_text("b\n")
    agent_git(repo, "add", "b.txt")
    subprocess.run(
        ["git", "commit", "-q", "--author", "Ann <ann@x.example>", "-m", "third <x@y>\n\n%x00"],
        cwd=repo,
        check=True,
        env={**os.environ, "GIT_COMMITTER_NAME": "Cy", "GIT_COMMITTER_EMAIL": "cy@x.example"},
    )
    messages, who = git.commit_texts(base, "HEAD")
    assert messages == ["first\n\nwith a body", "second", "third <x@y>\n\n%x00"]
    assert who == [smith, "Ann <ann@x.example>", "Cy <cy@x.example>"]


def test_numstat_counts_text_binary_and_renames(repo: Path, git: Git) -> None:
    """Exact counts; None for binary; a rename is reported under its new path."""
    lines = "".join(f"line {i}\n" for i in range(20))
    commit_file(repo, "old_name.txt", lines)
    base = git.rev_parse("HEAD")
    (repo / "README.md").write_text("hello\nworld\nagain\n")
    (repo / "blob.bin").write_bytes(bytes(range(256)) * 4)
    agent_git(repo, "mv", "old_name.txt", "new name.txt")
    (repo / "new name.txt").write_text(lines + "one more\n")
    agent_git(repo, "add", "-A")
    agent_git(repo, "commit", "-q", "-m", "mixed")
    stats = {s.path: (s.added, s.deleted) for s in git.numstat(base, "HEAD")}
    assert stats == {"README.md": (2, 0), "blob.bin": (None, None), "new name.txt": (1, 0)}


def test_patch_is_bounded(repo: Path, git: Git) -> None:
    """A diff past max_bytes is cut at a line end and the rest is counted, not kept."""
    base = git.rev_parse("HEAD")
    commit_file(repo, "big.txt", "".join(f"row {i:06d}\n" for i in range(20000)))
    full = agent_git(repo, "diff", base, "HEAD")
    text, dropped = git.patch(base, "HEAD", max_bytes=5000)
    assert len(text.encode()) <= 5000
    assert text.endswith("\n")
    assert full.startswith(text)
    assert len(text.encode()) + dropped == len(full.encode())
    assert git.patch(base, "HEAD", max_bytes=10**9) == (full, 0)
    with pytest.raises(RepoError, match="git diff"):
        git.patch(base, "no-such-ref", max_bytes=100)


def test_magi_prunes_only_the_registrations_of_its_own_trees(
    repo: Path, git: Git, tmp_path: Path
) -> None:
    """A user's worktree on a disk that is not mounted now (its directory gone) stays
    registered; a tree of magi's under the given root, removed, loses its registration; a
    locked one keeps it, as git's own prune would."""
    user, ours, locked = (
        tmp_path / "usb" / "wt",
        tmp_path / "run" / "judge-1",
        tmp_path / "run" / "kept",
    )
    for path in (user, ours, locked):
        git.worktree_add(path, start="main")
    agent_git(repo, "worktree", "lock", str(locked))
    for path in (user, ours, locked):
        shutil.rmtree(path)
    assert git.prune_worktrees(tmp_path / "run") == [ours]
    listed = {p.resolve() for p in git.worktrees()}
    assert user.resolve() in listed
    assert locked.resolve() in listed
    assert ours.resolve() not in listed


def test_magi_prunes_its_own_trees_named_through_a_link(
    repo: Path, git: Git, tmp_path: Path
) -> None:
    """The run's folder named through a symlink (macOS's /tmp is one): git registered the
    real path, and the stale registration is still found as the run's own."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    tree = real / "judge-1"
    git.worktree_add(tree, start="main")
    shutil.rmtree(tree)
    assert git.prune_worktrees(tmp_path / "link") == [tree.resolve()]
    assert tree.resolve() not in {p.resolve() for p in git.worktrees()}


def test_gits_environment_follows_this_processes_and_drops_its_git_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Built once and reused while the process's environment stays as it was; a variable
    set or removed since is seen at the next git command, every ``GIT_*`` of the caller's
    is dropped, and magi's own and a command's extras come on top, as bytes (one name
    never twice)."""
    from magi.git import repo as repo_module

    monkeypatch.setenv("MAGI_TEST_VAR", "one")
    monkeypatch.setenv("GIT_DIR", "/somewhere/else")
    first = repo_module._env()
    assert first[b"MAGI_TEST_VAR"] == b"one"
    assert b"GIT_DIR" not in first
    assert first[b"LC_ALL"] == b"C"
    assert repo_module._env() is first, "unchanged: reused"
    monkeypatch.setenv("MAGI_TEST_VAR", "two")
    assert repo_module._env()[b"MAGI_TEST_VAR"] == b"two"
    monkeypatch.delenv("MAGI_TEST_VAR")
    assert b"MAGI_TEST_VAR" not in repo_module._env()
    extra = repo_module._env({"GIT_INDEX_FILE": "/tmp/index", "LC_ALL": "C.UTF-8"})
    assert extra[b"GIT_INDEX_FILE"] == b"/tmp/index"
    assert extra[b"LC_ALL"] == b"C.UTF-8"
    assert all(isinstance(k, bytes) for k in extra)
    assert b"GIT_INDEX_FILE" not in repo_module._env(), "an extra is that command's alone"


def test_commit_all_leaves_out_untracked_caches_the_repository_does_not_ignore(
    repo: Path, git: Git
) -> None:
    """A repository without a .gitignore: the rescue commit takes the seat's work, not the
    ``__pycache__/`` and ``.pytest_cache/`` its test runs left (the tree keeps them)."""
    wt = repo.parent / "wt"
    git.worktree_add(wt, start="main", branch="magi/r1/A")
    (wt / "pkg" / "__pycache__").mkdir(parents=True)
    (wt / "pkg" / "mod.py").write_text("x = 1\n")
    (wt / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\x00cache")
    (wt / ".pytest_cache").mkdir()
    (wt / ".pytest_cache" / "README.md").write_text("cache\n")
    made = git.commit_all(wt, "rescued work")
    assert made is not None
    files = agent_git(wt, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert "pkg/mod.py" in files
    assert not [f for f in files if "__pycache__" in f or f.startswith(".pytest_cache")]
    assert (wt / "pkg" / "__pycache__" / "mod.cpython-311.pyc").exists()
