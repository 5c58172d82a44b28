"""Candidate clones: own refs, config and hooks, borrowed objects, and magi's fetch back."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from magi.git import clones, refs_guard
from magi.git.repo import Git, Made
from magi.git.salvage import discard_run, worktrees_of
from magi.git.worktree_guard import GuardSnapshot, restore

RUN = "20261201-080000-cafe"
BRANCH = f"magi/{RUN}/A"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No global git config of the machine; an identity for commits."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "x")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "x@example.invalid")


def sh(cwd: Path, *args: str, input: str | None = None) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, input=input
    ).stdout.strip()


@pytest.fixture
def git(tmp_path: Path) -> Git:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "f.txt").write_text("one\n")
    sh(repo, "add", "-A")
    sh(repo, "commit", "-q", "-m", "i")
    return Git(repo)


@pytest.fixture
def clone(git: Git, tmp_path: Path) -> Path:
    tree = tmp_path / "wt" / RUN / "A"
    clones.make(git, tree, branch=BRANCH, start="main")
    return tree


def _commit(tree: Path, text: str) -> str:
    (tree / "f.txt").write_text(text)
    sh(tree, "commit", "-q", "-am", text.strip())
    return sh(tree, "rev-parse", "HEAD")


def test_a_clone_has_its_own_git_dir_and_borrows_the_objects(git: Git, clone: Path) -> None:
    """Checked out on its branch; no ref of the repository; objects written only to its own."""
    assert clones.is_clone(clone)
    assert (clone / "f.txt").read_text() == "one\n"
    assert sh(clone, "symbolic-ref", "HEAD") == f"refs/heads/{BRANCH}"
    assert sh(clone, "for-each-ref", "--format=%(refname)") == f"refs/heads/{BRANCH}"
    head = _commit(clone, "two\n")
    assert not git.run("cat-file", "-t", head, check=False).strip()  # not in the repository
    assert not git.ref_exists(f"refs/heads/{BRANCH}")
    assert git.worktrees() == [git.root]  # git lists no worktree for it


def test_fetch_back_brings_exactly_the_candidates_branch(git: Git, clone: Path) -> None:
    """The branch lands in the repository with its objects; no other ref of the clone does."""
    head = _commit(clone, "two\n")
    sh(clone, "update-ref", "refs/heads/main", head)  # its own "main": stays its own
    base = git.rev_parse("main")
    got = clones.fetch_back(git, clone, branch=BRANCH, base=base, fallback=base)
    assert (got.head, got.violations) == (head, ())
    assert [sha for sha, _ in got.commits or []] == [head]  # read on the way, for the scrub
    assert git.rev_parse(f"refs/heads/{BRANCH}") == head
    assert git.rev_parse("main") == base
    assert sorted(git.branches("")) == sorted(["main", BRANCH])


def test_history_not_descending_from_the_base_is_not_taken(git: Git, clone: Path) -> None:
    """An unrelated history is refused, and the repository's branch stays where it was."""
    base = git.rev_parse("main")
    sh(clone, "checkout", "-q", "--orphan", "other")
    orphan = _commit(clone, "unrelated\n")
    sh(clone, "update-ref", f"refs/heads/{BRANCH}", orphan)
    got = clones.fetch_back(git, clone, branch=BRANCH, base=base, fallback=base)
    assert got.head == base
    assert "does not descend from the base" in got.violations[0]
    assert git.rev_parse(f"refs/heads/{BRANCH}") == base


def test_a_deleted_branch_is_not_taken(git: Git, clone: Path) -> None:
    """Nothing to fetch: the reason is said, the branch stays on its fallback."""
    base = git.rev_parse("main")
    (clone / ".git" / "refs" / "heads" / BRANCH).unlink()
    got = clones.fetch_back(git, clone, branch=BRANCH, base=base, fallback=base)
    assert got.head == base
    assert "could not be fetched" in got.violations[0]


def test_what_is_planted_in_a_clone_is_never_run_by_magi(
    git: Git, clone: Path, tmp_path: Path
) -> None:
    """Hook, fsmonitor and hooksPath in the clone's config: magi's git runs none of them."""
    ran = tmp_path / "ran"
    hook = clone / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\necho hook >> {ran}\n")
    hook.chmod(0o755)
    sh(clone, "config", "core.fsmonitor", f"echo fsmonitor >> {ran}")
    sh(clone, "config", "core.hooksPath", str(hook.parent))
    (clone / "f.txt").write_text("two\n")
    own = clones.git_of(git, clone)
    assert own.commit_all(clone, "rescued")
    base = git.rev_parse("main")
    got = clones.fetch_back(git, clone, branch=BRANCH, base=base, fallback=base)
    assert got.violations == ()
    assert not ran.exists()


def test_the_guard_sees_a_clones_own_tampering(git: Git, clone: Path) -> None:
    """A snapshot of the clone's git dir: hook, config key, alternates and refs, restored."""
    own = clones.git_of(git, clone)
    snap, refs = GuardSnapshot.take(own), refs_guard.take(own)
    (clone / ".git" / "hooks" / "post-checkout").write_text("#!/bin/sh\n")
    sh(clone, "config", "core.fsmonitor", "true")
    sh(clone, "update-ref", "refs/heads/magi/x/B", "HEAD")
    alternates = clone / ".git" / "objects" / "info" / "alternates"
    kept = alternates.read_text()
    alternates.write_text("/elsewhere\n")
    found = restore(own, snap)  # first: the refs guard runs git in the clone
    found += refs_guard.restore(own, refs, allowed={f"refs/heads/{BRANCH}"})
    text = "\n".join(found)
    assert "hooks/post-checkout added" in text
    assert "config changed: core.fsmonitor" in text
    assert "objects/info/alternates changed" in text
    assert "refs/heads/magi/x/B created" in text
    assert alternates.read_text() == kept
    assert "fsmonitor" not in sh(clone, "config", "--list")


def test_a_damaged_clone_is_made_again_and_a_sound_one_adopted(git: Git, clone: Path) -> None:
    """Adopted as it is; a removed .git, or a HEAD on another branch, is made again."""
    base = git.rev_parse("main")
    (clone / "work").write_text("x")
    assert clones.adopt_or_make(git, clone, branch=BRANCH, base=base, hooks=None) == "adopted"
    assert (clone / "work").exists()
    sh(clone, "checkout", "-q", "-b", "elsewhere")
    assert clones.damage(clone) is None  # not damage: put back on its branch after a turn
    assert clones.adopt_or_make(git, clone, branch=BRANCH, base=base, hooks=None) == "recreated"
    subprocess.run(["rm", "-rf", str(clone / ".git")], check=True)
    assert clones.damage(clone) == "its tree's .git directory is missing or replaced"
    assert clones.adopt_or_make(git, clone, branch=BRANCH, base=base, hooks=None) == "recreated"
    assert clones.sound(clone, BRANCH)
    assert not (clone / "work").exists()


def test_a_clone_is_made_again_on_the_work_magi_fetched(git: Git, clone: Path) -> None:
    """After fold removed it, the winner's clone comes back on its branch, not on the base."""
    head = _commit(clone, "two\n")
    base = git.rev_parse("main")
    clones.fetch_back(git, clone, branch=BRANCH, base=base, fallback=base)
    subprocess.run(["rm", "-rf", str(clone)], check=True)
    assert clones.adopt_or_make(git, clone, branch=BRANCH, base=base, hooks=None) == "created"
    assert sh(clone, "rev-parse", "HEAD") == head
    assert (clone / "f.txt").read_text() == "two\n"


def test_magi_s_hooks_dir_is_the_clones_own_hooks_path(git: Git, tmp_path: Path) -> None:
    """The agent's own commits run magi's commit-msg hook (a path with quotes survives)."""
    hooks = tmp_path / 'ho"o\\ks'
    hooks.mkdir()
    tree = tmp_path / "wt" / RUN / "B"
    clones.make(git, tree, branch=f"magi/{RUN}/B", start="main", hooks=hooks)
    assert sh(tree, "config", "core.hooksPath") == str(hooks.resolve())


def test_sync_puts_the_clone_on_a_head_the_repository_has(git: Git, clone: Path) -> None:
    """A head rewritten in the repository (a scrub) is checked out in the clone, no fetch."""
    sh(git.root, "commit", "-q", "--allow-empty", "-m", "later")
    later = git.rev_parse("main")
    clones.sync(git, clone, BRANCH, later)
    assert sh(clone, "rev-parse", "HEAD") == later
    assert sh(clone, "symbolic-ref", "HEAD") == f"refs/heads/{BRANCH}"


def test_a_runs_clones_are_found_and_removed_from_git_alone(
    git: Git, clone: Path, tmp_path: Path
) -> None:
    """Git lists no clone, so the run's folder is searched: fold and a lost record find them."""
    assert worktrees_of(git, RUN, [tmp_path / "wt"]) == [clone.resolve()]
    removed, kept = discard_run(git, RUN, [tmp_path / "wt"])
    assert str(clone.resolve()) in removed
    assert kept == []
    assert not clone.exists()
    assert not (tmp_path / "wt" / RUN).exists()


def test_a_tree_replaced_by_a_link_is_damage_and_its_target_is_left_alone(
    git: Git, clone: Path, tmp_path: Path
) -> None:
    """A link to the user's checkout, or to any directory: damage; remade, the target kept."""
    subprocess.run(["rm", "-rf", str(clone)], check=True)
    clone.symlink_to(git.root)  # a sound-looking repository behind the link
    assert clones.damage(clone) == "its tree was replaced by a link"
    precious = tmp_path / "precious"
    (precious / "data").mkdir(parents=True)
    clone.unlink()
    clone.symlink_to(precious)
    base = git.rev_parse("main")
    assert clones.adopt_or_make(git, clone, branch=BRANCH, base=base, hooks=None) == "recreated"
    assert (precious / "data").is_dir()
    assert not (precious / ".git").exists()
    assert not clone.is_symlink()
    assert clones.sound(clone, BRANCH)
    assert sh(git.root, "branch", "--format=%(refname:short)") == "main"


def test_a_git_dir_that_defers_to_another_is_damage(git: Git, clone: Path, tmp_path: Path) -> None:
    """A commondir file (git honours it in any git dir) or a linked config: never git'ed."""
    evil = tmp_path / "evil.git"
    subprocess.run(["git", "init", "-q", "--bare", str(evil)], check=True)
    (clone / ".git" / "commondir").write_text(f"{evil}\n")
    assert clones.damage(clone) == "its git directory defers to another (a commondir file)"
    (clone / ".git" / "commondir").unlink()
    (clone / ".git" / "config").unlink()
    (clone / ".git" / "config").symlink_to(evil / "config")
    assert clones.damage(clone) == "its git directory's config was replaced by a link"


def test_a_clone_without_its_index_is_no_damage_but_is_not_adopted(git: Git, clone: Path) -> None:
    """An agent that ran `rm .git/index` (a usual mend for a broken one) damaged nothing of
    its work: a handback takes it. Prep adopts only a whole clone, and remakes this one."""
    (clone / ".git" / "index").unlink()
    assert clones.damage(clone) is None
    assert clones.on_branch(clone, BRANCH)
    assert not clones.sound(clone, BRANCH)
    (clone / ".git" / "objects" / "info" / "alternates").unlink()
    assert clones.damage(clone) is None


def _own_objects(tree: Path) -> list[str]:
    store = tree / ".git" / "objects"
    return sorted(str(p.relative_to(store)) for p in store.rglob("*") if p.is_file())


def test_a_fresh_clone_owns_no_objects_until_its_seat_writes_one(git: Git, clone: Path) -> None:
    """Empty as made; a `git add` (a blob of its own) or a link in the store makes it not."""
    assert clones.owns_no_objects(clone)
    (clone / "f.txt").write_text("seat's\n")
    sh(clone, "add", "f.txt")
    assert not clones.owns_no_objects(clone)
    for p in (clone / ".git" / "objects").iterdir():
        if p.name not in ("info", "pack"):
            for f in p.iterdir():
                f.unlink()
            p.rmdir()
    assert clones.owns_no_objects(clone)
    (clone / ".git" / "objects" / "pack").rmdir()
    (clone / ".git" / "objects" / "pack").symlink_to(git.root)
    assert not clones.owns_no_objects(clone)


def test_take_back_sets_the_branch_from_magi_s_commit_without_a_fetch(
    git: Git, clone: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rescue commit is written into the repository's store: the clone's own stays
    empty, and the repository's branch is the clone's head, checked like a fetched one."""
    (clone / "f.txt").write_text("two\n")
    (clone / "new.txt").write_text("new\n")
    own = clones.git_of(git, clone)
    made = own.commit_all(clone, "rescued", objects=clones.objects(git))
    real_exec = Git._exec

    def no_fetch(self: Git, args: list[str], **kw: object) -> object:
        assert "fetch" not in args, "taken back without a fetch"
        return real_exec(self, args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Git, "_exec", no_fetch)
    assert made is not None
    assert _own_objects(clone) == ["info/alternates"]
    base = git.rev_parse("main")
    got = clones.take_back(git, clone, branch=BRANCH, base=base, fallback=base, made=made)
    assert (got.head, got.violations) == (made.sha, ())
    assert got.commits is not None
    assert [m.strip() for _, m in got.commits] == ["rescued"]
    assert git.rev_parse(f"refs/heads/{BRANCH}") == made.sha == sh(clone, "rev-parse", "HEAD")
    assert sh(git.root, "show", f"{made.sha}:new.txt") == "new"
    # Read back, the span is what the commit said it is.
    assert git.span_log(base, f"refs/heads/{BRANCH}").commits == got.commits


def test_take_back_refuses_what_the_repository_cannot_resolve_or_does_not_descend(
    git: Git, clone: Path, tmp_path: Path
) -> None:
    """A head only the clone can see, or history off the base: the branch goes back."""
    base = git.rev_parse("main")
    ghost = Made("f" * 40, base, "ghost")
    got = clones.take_back(git, clone, branch=BRANCH, base=base, fallback=base, made=ghost)
    assert got.head == base
    assert "could not be taken back" in got.violations[0]
    assert git.rev_parse(f"refs/heads/{BRANCH}") == base
    orphan = sh(git.root, "commit-tree", "-m", "orphan", sh(git.root, "rev-parse", "main^{tree}"))
    sh(clone, "update-ref", f"refs/heads/{BRANCH}", orphan)  # borrowed: nothing of its own
    assert clones.owns_no_objects(clone)
    got = clones.take_back(git, clone, branch=BRANCH, base=base, fallback=base)
    assert got.head == base
    assert "does not descend" in got.violations[0]
    assert git.rev_parse(f"refs/heads/{BRANCH}") == base


def test_take_back_refuses_a_head_whose_objects_are_not_all_there(git: Git, clone: Path) -> None:
    """What a fetch would have refused: a commit the repository has whose blob it lacks
    (an unjailed seat can write one into the store; a seat's index can name a cached tree
    that is not there). Refused whether magi made the commit on the base or not."""
    base = git.rev_parse("main")
    blob = sh(git.root, "hash-object", "-w", "--stdin", input="lost\n")
    tree = sh(git.root, "mktree", input=f"100644 blob {blob}\tf.txt\n")
    broken = sh(git.root, "commit-tree", "-p", base, "-m", "x", tree)
    (git.root / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    sh(clone, "update-ref", f"refs/heads/{BRANCH}", broken)
    assert clones.owns_no_objects(clone)
    for made in (None, Made(broken, base, "x")):
        got = clones.take_back(git, clone, branch=BRANCH, base=base, fallback=base, made=made)
        assert got.head == base
        assert "could not be taken back" in got.violations[0]
        assert "missing" in got.violations[0]
        assert git.rev_parse(f"refs/heads/{BRANCH}") == base
