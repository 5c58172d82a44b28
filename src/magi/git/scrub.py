"""Trailer scrub: commits that bypassed the commit-msg hook are rewritten before anyone sees them.

An implementer can commit with ``--no-verify`` (or plant its own hooksPath), so the hook is
a first line, not the guarantee. After each implement turn magi reads every new commit's
message; if one still carries a ``Co-Authored-By:`` or ``Generated with`` line, the chain is
rewritten with the trailers stripped: same trees, authors and dates, new messages. The
commits are rebuilt from their raw objects (``git cat-file commit``), so nothing but the
message changes; a signature header is dropped, since it no longer signs this content.
"""

from __future__ import annotations

from magi.core.compete.blind import strip_trailers
from magi.git.repo import Git


def _rewrite(raw: str, parents: dict[str, str]) -> str:
    head, _, message = raw.partition("\n\n")
    lines: list[str] = []
    skipping = False
    for line in head.split("\n"):
        if skipping and line.startswith(" "):
            continue  # continuation of a multi-line gpgsig header
        skipping = line.startswith(("gpgsig", "gpgsig-sha256"))
        if skipping:
            continue
        if line.startswith("parent "):
            old = line.split(" ", 1)[1]
            line = f"parent {parents.get(old, old)}"
        lines.append(line)
    return "\n".join(lines) + "\n\n" + strip_trailers(message).rstrip("\n") + "\n"


def scrub_branch(
    git: Git, *, base: str, branch: str, commits: list[tuple[str, str]] | None = None
) -> int:
    """Rewrite ``base..branch`` if any message keeps a trailer; returns how many were cleaned.

    ``commits``: that span as ``Git.span_log`` read it (sha, message; oldest first), when
    the caller has it already.
    """
    if commits is None:
        commits = git.span_log(base, f"refs/heads/{branch}").commits
    dirty = [m for _, m in commits if strip_trailers(m) != m]
    if not dirty:
        return 0
    mapping: dict[str, str] = {}
    for sha, _ in commits:
        raw = git.run("cat-file", "commit", sha)
        new = git.run("hash-object", "-t", "commit", "-w", "--stdin", input=_rewrite(raw, mapping))
        mapping[sha] = new.strip()
    old_tip = commits[-1][0]
    git.run("update-ref", f"refs/heads/{branch}", mapping[old_tip], old_tip)
    return len(dirty)
