"""A landing fix round on a PR whose base conflicts: the base merged in, the markers checked.

When the PR's branch does not contain its base and ``git merge-tree`` says the two
conflict, the round starts from a merge commit magi makes itself (``commit-tree``: no
worktree, no hook, the neutral identity) whose files carry git's conflict markers; the
fixer resolves them and commits (``magi.core.review.land_prompt.conflict_section`` names the
paths and git's words, quoted as data). After its turn every path git named is read at the
fixer's head: one that still holds a marker is not resolved, and publish labels the PR
``magi:conflict`` for a person instead of pushing (``magi.action.publish_job.land_publish``).

The base is the base branch as this checkout fetched it (``origin/<base>``, the workflow's
checkout fetches every branch), else the base commit the read step saw.
"""

from __future__ import annotations

from magi.core.threads.conflict import MergeTree, left_markers, read_merge_tree
from magi.errors import RepoError
from magi.git.repo import NEUTRAL_EMAIL, NEUTRAL_NAME, Git
from magi.model.fix_round import RoundInput
from magi.model.landing import MAX_PATHS, LandConflict

__all__ = ["base_tip", "conflicting", "left_marked", "merge_base_in", "outside"]


def base_tip(git: Git, inp: RoundInput) -> str:
    """The base commit a conflict round merges: ``origin/<base_ref>``, else ``inp.base``."""
    if inp.base_ref:
        ref = f"refs/remotes/origin/{inp.base_ref}"
        got = git._exec(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], check=False)
        if got.returncode == 0:
            return got.stdout.decode().strip()
    return inp.base if inp.base and git.has_commit(inp.base) else ""


def conflicting(git: Git, head: str, base: str) -> MergeTree | None:
    """``git merge-tree`` of ``head`` and ``base`` when they conflict; None when the base is
    already in the head, unknown, or merges cleanly (a rebase's business, not the fixer's)."""
    if not base or git._ok("merge-base", "--is-ancestor", base, head):
        return None
    res = git._exec(["merge-tree", "--write-tree", "--name-only", head, base], check=False)
    if res.returncode not in (0, 1):
        said = res.stderr.decode("utf-8", "replace").strip()
        raise RepoError(f"git merge-tree {head[:12]} {base[:12]} failed: {said}")
    merged = read_merge_tree(res.stdout.decode("utf-8", "replace"))
    return None if merged.clean else merged


def merge_base_in(git: Git, head: str, base: str, merged: MergeTree) -> LandConflict:
    """The merge commit (``head`` then ``base``, conflicts marked) the fixer starts from."""
    ident = ["-c", f"user.name={NEUTRAL_NAME}", "-c", f"user.email={NEUTRAL_EMAIL}"]
    message = (
        f"Merge the base {base[:12]} (conflicts marked for the fixer)\n\n"
        + "\n".join(f"Conflict: {p}" for p in merged.paths[:50])
        + "\n"
    )
    res = git._exec(
        [*ident, "commit-tree", merged.tree, "-p", head, "-p", base], input=message.encode()
    )
    merge = res.stdout.decode().strip()
    paths = list(merged.paths[:MAX_PATHS])
    return LandConflict(base=base, merge=merge, paths=paths, said=merged.said)


def left_marked(git: Git, head: str, paths: list[str]) -> list[str]:
    """The ``paths`` that still hold a conflict marker at ``head`` (a deleted one does not)."""
    left = []
    for path in paths:
        got = git._exec(["cat-file", "blob", f"{head}:{path}"], check=False)
        if got.returncode == 0 and left_markers(got.stdout.decode("utf-8", "replace")):
            left.append(path)
    return left


def outside(git: Git, merged: MergeTree, head: str) -> list[str]:
    """The paths where ``head``'s tree differs from git's own merge (``merged.tree``) other
    than the conflicting ones: a resolution chooses content for those alone, so anything
    else it changed (a base change thrown away, ``merge -s ours``, an old workflow checked
    out) is named here."""
    out = git.run("diff", "--name-only", "--no-renames", "-z", merged.tree, head)
    mine = set(merged.paths)
    return sorted({p for p in out.split("\0") if p and p not in mine})
