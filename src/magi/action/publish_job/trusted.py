"""What the publishing jobs decide by: the default branch as GitHub holds it at publish time.

The artifact is written in the agents job, where agents run: an agent outside the jail
(an unjailed runner, macOS) or a compromised agents job can write anything in it. So the
publishing jobs take from it only results (the record, the bundle, checked against the
repository), and every setting that decides what is pushed, posted or counted
(``[github] workflow_changes``, ``attempts``, ``workflow``, the roster the posting gate
hides, the runner labels a dispatch may name) from the default branch: its head fetched
from the remote when publish runs (``HEAD`` on GitHub is the default branch), its config
read from that commit's tree, never from a file on a disk an agent could write.
"""

from __future__ import annotations

from dataclasses import dataclass

from magi.action.bundle import INCOMING
from magi.config.load import REPO_LAYERS, load_repo_texts
from magi.errors import ActionError, MagiError
from magi.git.remote import Remote
from magi.git.repo import Git
from magi.model.config import AgentConfig, Config
from magi.model.run import Run

__all__ = ["DefaultBranch", "default_branch", "hidden_roster"]


@dataclass(frozen=True)
class DefaultBranch:
    head: str  # its head commit when publish read it
    config: Config  # the repository's config in that commit


def default_branch(git: Git, remote: Remote, name: str = "default") -> DefaultBranch:
    """The default branch's head, fetched now, and the config its tree holds."""
    head = remote.fetch("HEAD", f"{INCOMING}/{name}")
    if head is None:
        raise ActionError("publish reads the default branch from the remote: it has no HEAD")
    layers = []
    for path in REPO_LAYERS:
        if git.run("cat-file", "-t", f"{head}:{path}", check=False).strip() == "blob":
            layers.append((path, git.run("cat-file", "blob", f"{head}:{path}")))
    try:
        config = load_repo_texts(layers).config
    except MagiError as e:
        raise ActionError(
            f"publish reads the repository's config from the default branch ({head[:12]}): "
            f"{e.message}"
        ) from None
    return DefaultBranch(head, config)


def hidden_roster(trusted: Config, run: Run) -> list[AgentConfig]:
    """The names the posting gate hides before the tally: the default branch's roster,
    never fewer. The artifact's own roster can only add to it (a repository whose config
    names no agent seats the CLIs its runner finds, and those names are the run's alone);
    an artifact that drops a name hides it all the same."""
    known = {a.id for a in trusted.agents}
    return [*trusted.agents, *(a for a in run.config.agents if a.id not in known)]
