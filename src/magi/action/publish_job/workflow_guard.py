"""Agent-written changes to ``.github/workflows/`` are not pushed unless config allows them.

The App holds ``workflows: write`` because GitHub refuses any App-token push whose commits
change a workflow file, and a rebase onto a base whose workflows changed is such a push.
That same permission would let a candidate (or a landing fixer) ship a workflow that runs
with the repository's secrets on its own PR. So what magi pushes of an agent's is checked
against its base here: a branch whose diff touches ``.github/workflows/`` is not pushed
while ``[github] workflow_changes`` is false (the default), and the run says which files.
"""

from __future__ import annotations

from magi.git.repo import Git

__all__ = ["WORKFLOWS", "workflow_changes"]

WORKFLOWS = ".github/workflows/"


def workflow_changes(git: Git, base: str, head: str) -> list[str]:
    """The workflow files ``head`` changes against ``base`` (their merge base)."""
    out = git.run("diff", "--name-only", "--no-renames", f"{base}...{head}", "--", WORKFLOWS)
    return sorted({line for line in out.splitlines() if line.strip()})
