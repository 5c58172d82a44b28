"""What a run left in a repository, found from git alone: for a killed prep and a lost record.

A kill -9 while prep was adding worktrees left a worktree (or a half-made directory) that
the record never heard of; the resume then failed on ``'…/B' already exists`` and fold on
``Cannot delete branch … checked out`` (issue 7). And a run whose record cannot be read
could not be folded at all. Everything of a run is named by its id (branches
``magi/<id>/*``, worktrees under ``<root>/<id>/``), so git itself can say what is there:
``worktrees_of`` lists them (with the candidate clones under the run's folder, which git
does not list), ``adopt_or_recreate`` makes a worktree idempotent (``clones.adopt_or_make``
does it for a clone), ``discard_run`` removes the lot.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from magi.git.checkout import damage, discard
from magi.git.clones import is_clone
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
    """Worktrees on a ``magi/<run_id>/`` branch, or under ``<root>/<run_id>/`` of a root, and
    the candidate clones under ``<root>/<run_id>/``."""
    prefix = f"magi/{run_id}/"
    dirs = [(Path(r) / run_id).resolve() for r in roots]
    out = []
    for i, wt in enumerate(worktrees(git)):
        if i == 0:
            continue  # the user's own checkout is never the run's
        # Under <root>/<id>/ of a known root, or of any root: the id is its own directory.
        under = run_id in wt.path.parts[:-1] or any(
            wt.path.resolve().is_relative_to(d) for d in dirs
        )
        if under or (wt.branch or "").startswith(prefix):
            out.append(wt.path)
    # Candidate clones are repositories of their own: git lists none of them.
    for d in dirs:
        children = sorted(d.iterdir()) if d.is_dir() else []
        out += [p for p in children if p not in out and is_clone(p)]
    return out


def free_branch(git: Git, branch: str) -> list[Path]:
    """Remove every linked worktree that has ``branch`` checked out (so it can be deleted)."""
    freed = [w.path for i, w in enumerate(worktrees(git)) if i and w.branch == branch]
    for path in freed:
        discard(git, path)
    return freed


def adopt_or_recreate(git: Git, path: Path, *, branch: str, start: str) -> str:
    """Leave ``path`` a sound worktree of ``branch``: "adopted", "recreated" or "created".

    A sound worktree a killed prep made is adopted as it is; anything else at ``path`` (a
    half-made directory, a stale registration, a tree on another branch) is removed and the
    worktree made again, on the branch if it exists, else on a new branch from ``start``.
    """
    path = Path(path)
    if path.exists() and damage(git, path, branch) is None:
        return "adopted"
    existed = path.exists() or path.resolve() in {w.path.resolve() for w in worktrees(git)}
    discard(git, path)
    free_branch(git, branch)  # a branch checked out elsewhere cannot be checked out here
    path.parent.mkdir(parents=True, exist_ok=True)
    if git.ref_exists(f"refs/heads/{branch}"):
        git.run("worktree", "add", "--end-of-options", str(path.resolve()), branch)
    else:
        git.worktree_add(path, start=start, branch=branch)
    return "recreated" if existed else "created"


def discard_run(git: Git, run_id: str, roots: Iterable[Path] = ()) -> list[str]:
    """Remove every worktree and branch of ``run_id``; what was removed, one line each."""
    roots = list(roots)
    removed: list[str] = []
    for path in worktrees_of(git, run_id, roots):
        discard(git, path)
        removed.append(str(path))
    for branch in git.branches(f"magi/{run_id}/"):
        git.delete_branch(branch)
        removed.append(branch)
    for root in roots:
        d = Path(root) / run_id
        if d.is_dir() and not any(d.iterdir()):
            d.rmdir()
    return removed
