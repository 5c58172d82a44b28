"""Agent-written changes under ``.github/`` are not pushed unless the default branch allows them.

The App holds ``workflows: write`` because GitHub refuses any App-token push whose commits
change a workflow file, and a rebase onto a base whose workflows changed is such a push.
That same permission would let a candidate (or a landing fixer) ship a workflow that runs
with the repository's secrets on its own PR. So what magi pushes of an agent's is checked
here: a branch whose tree differs under ``.github/`` from the tree it is compared with is
not pushed while ``[github] workflow_changes`` is false (the default), and the run says
which files. The setting is the default branch's, read at publish time, never the
artifact's (the artifact is written where agents ran).

Two-dot, trees against trees. A candidate is compared with the default branch's head as
publish finds it, not with the base its artifact names, and not three-dot against a merge
base: a branch cut from an old base carries that base's workflows, and one the default
branch has since deleted would come back with it, which a diff from the merge base cannot
see. A candidate behind a change of the default branch's ``.github/`` is therefore held
too; its PR would undo that change.
"""

from __future__ import annotations

from magi.git.repo import Git

__all__ = ["WORKFLOWS", "workflow_changes"]

WORKFLOWS = ".github/"


def workflow_changes(git: Git, base: str, head: str) -> list[str]:
    """The files under ``.github/`` whose content differs between the trees of ``base``
    and ``head`` (two-dot: whichever side changed them)."""
    out = git.run("diff", "--name-only", "--no-renames", base, head, "--", WORKFLOWS)
    return sorted({line for line in out.splitlines() if line.strip()})
