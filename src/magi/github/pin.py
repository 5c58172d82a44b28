"""The claim commit that pins an issue's text (``magi.core.threads.pin``), written and read
through the Git Data API: the App and the workflow's admission job write it, the task job
reads it back and checks it with the App's key."""

from __future__ import annotations

import json

from magi.core.threads import markers
from magi.core.threads.markers import Seal
from magi.core.threads.pin import PIN_FILE, Pinned, digest, pin_bytes
from magi.errors import ActionError
from magi.github.models import Repo, TreeEntry
from magi.github.port import GitHubError, GitHubPort
from magi.github.state import claim_ref

__all__ = ["pin_commit", "read_pin"]


async def pin_commit(
    gh: GitHubPort,
    repo: Repo,
    *,
    issue: int,
    title: str,
    body: str,
    parent: str,
    message: str,
    seal: Seal,
) -> str:
    """A claim commit (parent ``parent``) whose tree is the issue's text alone and whose
    message ends in the sealed digest of it; its sha."""
    data = pin_bytes(title, body)
    blob = await gh.create_blob(repo, data)
    entry = TreeEntry(path=PIN_FILE, mode="100644", type="blob", sha=blob)
    tree = await gh.create_tree(repo, [entry], base_tree=None)
    mark = seal.marker(markers.PIN, issue=issue, digest=digest(data))
    made = await gh.create_git_commit(
        repo, message=f"{message}\n\n{mark}", tree=tree.sha, parents=[parent]
    )
    return made.sha


async def read_pin(gh: GitHubPort, repo: Repo, issue: int, seal: Seal) -> Pinned | None:
    """The text the claim of ``issue`` pinned; None when there is no claim or it pins
    nothing (a claim an older magi made). ActionError when it pins a text its sealed digest
    does not match: a claim magi's key did not seal is not read."""
    ref = await gh.get_ref(repo, claim_ref(issue).removeprefix("refs/"))
    if ref is None:
        return None
    commit = await gh.get_git_commit(repo, ref.sha)
    mark = seal.latest([commit.message], markers.PIN, issue=str(issue))
    where = f"the claim of #{issue} ({ref.sha[:12]})"
    if mark is None:
        if f"<!-- magi:{markers.PIN} " in commit.message:
            raise ActionError(f"{where} carries a pin magi's key did not seal")
        return None
    tree = (await gh.get_tree(repo, commit.tree)).tree
    entry = next((e for e in tree if e.path == PIN_FILE), None)
    if entry is None:
        raise ActionError(f"{where} has no {PIN_FILE}")
    try:
        data = (await gh.get_blob(repo, entry.sha)).content
    except GitHubError as e:
        raise ActionError(f"{where}: its {PIN_FILE} cannot be read ({e.status})") from None
    if digest(data) != mark.get("digest"):
        raise ActionError(f"{where}: its {PIN_FILE} is not the text magi sealed")
    try:
        text = json.loads(data.decode("utf-8"))
    except ValueError:
        raise ActionError(f"{where}: its {PIN_FILE} is not JSON") from None
    return Pinned(str(text.get("title") or ""), str(text.get("body") or ""))
