"""What a run left in a repository, found from git alone: for a killed prep and a lost record.

A kill -9 while prep was adding worktrees left a worktree (or a half-made directory) that
the record never heard of; the resume then failed on ``'…/B' already exists`` and fold on
``Cannot delete branch … checked out`` (issue 7). And a run whose record cannot be read
could not be folded at all. Everything of a run is named by its id (branches
``magi/<id>/*``, worktrees under ``<root>/<id>/``), so git itself can say what is there:
``worktrees_of`` lists them (with the candidate clones under the run's folder, which git
does not list; ``clones.adopt_or_make`` makes a clone idempotent), ``discard_run`` removes
the lot.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from magi.git import warm_index
from magi.git.checkout import discard
from magi.git.clones import is_clone, made_by_magi
from magi.git.repo import Git


@dataclass(frozen=True)
class Worktree:
    path: Path
    branch: str | None  # short name; None when detached


def worktrees(git: Git) -> list[Worktree]:
    """Every registered worktree with the branch it has checked out, the main one first."""
    out = git.run("worktree", "list", "--porcelain", "-z")
    found: list[Worktree] = []
    path: Path | None = None
    branch: str | None = None
    for field in [*out.split("\0"), ""]:
        if field.startswith("worktree "):
            path, branch = Path(field.removeprefix("worktree ")), None
        elif field.startswith("branch "):
            branch = field.removeprefix("branch ").removeprefix("refs/heads/")
        elif not field and path is not None:
            found.append(Worktree(path, branch))
            path = None
    return found


def worktrees_of(git: Git, run_id: str, roots: Iterable[Path] = ()) -> list[Path]:
    """Worktrees under ``<root>/<run_id>/`` (of a root given, or a folder named for the run
    anywhere), and the candidate clones under ``<root>/<run_id>/``. A worktree elsewhere on
    a ``magi/<run_id>/`` branch is not the run's: it is the user's, reading a candidate."""
    dirs = [(Path(r) / run_id).resolve() for r in roots]
    out = []
    for i, wt in enumerate(worktrees(git)):
        if i == 0:
            continue  # the user's own checkout is never the run's
        # Under <root>/<id>/ of a known root, or of any root: the id is its own directory.
        under = run_id in wt.path.parts[:-1] or any(
            wt.path.resolve().is_relative_to(d) for d in dirs
        )
        if under:
            out.append(wt.path)
    # Candidate clones are repositories of their own: git lists none of them.
    for d in dirs:
        children = sorted(d.iterdir()) if d.is_dir() else []
        out += [p for p in children if p not in out and is_clone(p)]
    return out


def free_branch(git: Git, branch: str, within: Path) -> list[Path]:
    """Remove every linked worktree under ``within`` (magi's own folder of trees) that has
    ``branch`` checked out, so the branch can be deleted; the worktrees elsewhere that hold
    it, left as they are. Those are the user's (``git worktree add ../look magi/<run>/B``
    to read a candidate, or the main checkout itself): magi never removes them, nor what
    they hold uncommitted."""
    held = [w.path for w in worktrees(git) if w.branch == branch]
    left = [p for p in held if not made_by_magi(p, within)]
    for path in held:
        if path not in left:
            discard(git, path)
    return left


def discard_run(git: Git, run_id: str, roots: Iterable[Path] = ()) -> tuple[list[str], list[str]]:
    """Remove every worktree and branch of ``run_id``: what was removed and what was kept
    (a branch a worktree of the user's has checked out), one line each."""
    roots = list(roots)
    removed: list[str] = []
    kept: list[str] = []
    for path in worktrees_of(git, run_id, roots):
        discard(git, path)
        removed.append(str(path))
    held = {w.branch: w.path for w in worktrees(git) if w.branch}
    for branch in git.branches(f"magi/{run_id}/"):
        if branch in held:
            kept.append(f"{branch}: checked out in your worktree {held[branch]} (left as it is)")
            continue
        git.delete_branch(branch)
        removed.append(branch)
    for root in roots:
        d = Path(root) / run_id
        for copy in warm_index.leftovers(d):  # index copies of turns a kill cut off
            warm_index.remove(copy)
            removed.append(str(copy))
        if d.is_dir() and not any(d.iterdir()):
            d.rmdir()
    return removed, kept
