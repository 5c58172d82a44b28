"""What publish checks of a landing fix round itself before it pushes, trusting no word of
the round's (the agents job wrote it, and an agent ran there).

A conflict round is one the App dispatched as such: its sealed ``land step=fix`` marker for
this head and round carries ``conflict=1``. A ``conflict`` in ``round.json`` without that
marker is refused whole: the field alone must not switch publish onto other checks.

A resolution is checked against git's own merge, recomputed here: ``git merge-tree
--write-tree <head> <conflict.base>`` (``conflict.base`` a full id on the base branch as
publish fetched it, and conflicting with the head, else the round is refused). The fixer
chooses content for the conflicting paths alone: any other path whose content at the new
head differs from that merged tree is a change of the base thrown away (``git merge -s
ours``, an old file checked out) and nothing is pushed. Every base change up to
``conflict.base`` is then in the new head, and any later one is not in its history, so
GitHub's three-way merge keeps it: a base that moved while the fixer worked cannot be
undone by naming an older one.

``.github/`` is compared with the base tip publish fetched, two-dot, as the candidate guard
compares a candidate with the default branch (``workflow_guard``): while ``[github]
workflow_changes`` is false, a round that brought base commits in (every conflict round;
an ordinary round whose fixer merged the base itself) is not pushed when its tree differs
from the base tip's under ``.github/``. Having merged the base, the PR's diff is that
difference: a workflow the base hardened and the round took back out shows there, where
head-to-new-head shows nothing.
"""

from __future__ import annotations

import re

from magi.action.agents_job.land import LandRound
from magi.action.agents_job.land_conflict import left_marked, outside
from magi.action.publish_job.workflow_guard import workflow_changes
from magi.core.threads.conflict import MergeTree
from magi.core.threads.posting import code
from magi.errors import TamperedArtifact
from magi.git.repo import Git
from magi.model.landing import MAX_PATHS, LandConflict

__all__ = ["base_workflows", "brought_base", "check_conflict", "why_not"]

_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def check_conflict(c: LandConflict) -> None:
    """``round.json``'s ``conflict`` as publish may use it, else refused naming the field:
    commits as full object ids, at most ``MAX_PATHS`` paths, each relative and inside the
    tree (no ``..``, no leading ``/``, no NUL or newline)."""
    for name, sha in (("base", c.base), ("merge", c.merge)):
        if not _SHA.fullmatch(sha):
            raise TamperedArtifact(f"round.json's conflict.{name} is not a full commit id")
    for name, paths in (("paths", c.paths), ("left", c.left)):
        if len(paths) > MAX_PATHS:
            raise TamperedArtifact(
                f"round.json's conflict.{name} names {len(paths)} paths (at most {MAX_PATHS})"
            )
        for p in paths:
            if not p or p.startswith("/") or ".." in p.split("/") or "\0" in p or "\n" in p:
                raise TamperedArtifact(
                    f"round.json's conflict.{name} holds {p[:200]!r}, not a relative path "
                    "inside the tree"
                )


def _merge_bases(git: Git, a: str, b: str) -> set[str]:
    return set(git.run("merge-base", "--all", a, b, check=False).split())


def brought_base(git: Git, head: str, new_head: str, tip: str) -> bool:
    """Whether the round's commits brought base commits in (its merge bases with the base
    tip moved): the fixer merged the base."""
    return _merge_bases(git, head, tip) != _merge_bases(git, new_head, tip)


def base_workflows(git: Git, new_head: str, tip: str) -> list[str]:
    """The files under ``.github/`` whose content differs between the base tip and the new
    head: once the base is merged in, what the PR's diff changes there."""
    return workflow_changes(git, tip, new_head)


def why_not(git: Git, done: LandRound, merged: MergeTree, workflows: list[str]) -> str:
    """Why a resolution of ``merged`` is not pushed ('' when it is): the base not in it,
    markers left, a path outside the conflict changed, workflows against the base tip
    (``workflows``, computed by the caller where the config forbids them), red e2e or gate."""
    base = done.conflict.base if done.conflict else ""
    if not git._ok("merge-base", "--is-ancestor", base, done.new_head):
        return f"the fixer's head does not contain the base `{base[:12]}`"
    left = left_marked(git, done.new_head, list(merged.paths))
    if left:
        return "the fixer left conflict markers in " + ", ".join(code(p) for p in left[:10])
    strays = outside(git, merged, done.new_head)
    if strays:
        return (
            "the fixer's resolution changes paths outside the conflict ("
            + ", ".join(code(p) for p in strays[:10])
            + "), where git's own merge of the base decides; a resolution chooses content "
            "for the conflicting paths alone"
        )
    if workflows:
        return (
            "the resolution's diff against the base changes workflows ("
            + ", ".join(code(p) for p in workflows[:5])
            + "), which magi does not push"
        )
    if not done.record().green:
        return f"the fixer's resolution did not pass ({done.verdict()})"
    return ""
