"""A rebase conflict handed to the fixer: what git said, read; what the fixer left, checked.

Pure. ``git merge-tree --write-tree --name-only <head> <base>`` merges without a worktree
and prints the merged tree (conflicts marked in the files), the conflicting paths, a
blank line and git's own words; ``read_merge_tree`` takes that apart. ``left_markers``
finds the lines a resolution must not keep: git's ``<<<<<<<`` / ``=======`` / ``>>>>>>>``
(and diff3's ``|||||||``), each a whole line starting a conflict hunk. A path with any of
them is not resolved.
https://git-scm.com/docs/git-merge-tree#OUTPUT
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from magi.core.threads.landing import CONFLICT
from magi.core.threads.posting import code
from magi.model.fix_round import quote

__all__ = ["MergeTree", "for_a_person", "left_markers", "read_merge_tree"]

# git writes each conflict marker as seven characters at the start of a line; the opening
# and closing ones are followed by a space and a label (or end the line).
_MARKER = re.compile(r"^(?:<{7}|>{7}|\|{7})(?: .*)?$|^={7}$")


@dataclass(frozen=True)
class MergeTree:
    """The merge ``git merge-tree`` made: its tree, the conflicting paths, git's words."""

    tree: str
    paths: tuple[str, ...]
    said: str

    @property
    def clean(self) -> bool:
        return not self.paths


def read_merge_tree(out: str) -> MergeTree:
    """``git merge-tree --write-tree --name-only`` output (with or without conflicts)."""
    lines = out.split("\n")
    tree = lines[0].strip() if lines else ""
    if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", tree):
        raise ValueError(f"git merge-tree gave no tree id on its first line: {tree[:80]!r}")
    rest = lines[1:]
    cut = rest.index("") if "" in rest else len(rest)
    paths = tuple(dict.fromkeys(p for p in rest[:cut] if p.strip()))
    said = "\n".join(rest[cut + 1 :]).strip()
    return MergeTree(tree, paths, said)


def left_markers(text: str) -> list[int]:
    """The 1-based line numbers of conflict markers left in ``text``."""
    return [n for n, line in enumerate(text.split("\n"), 1) if _MARKER.match(line.rstrip("\r"))]


def for_a_person(base_ref: str, base: str, paths: Sequence[str], said: str, why: str) -> str:
    """What the PR is told when a conflict is left to a person (labeled ``magi:conflict``)."""
    listed = "\n".join(f"- {code(p, 300)}" for p in paths[:50]) or "(git named no path)"
    return (
        f"magi could not bring this pull request onto `{base_ref}` (`{base[:12]}`): "
        f"the changes conflict, and {why}. This is a decision for a person.\n\n"
        f"Conflicting paths:\n{listed}\n\ngit said:\n\n{quote(said[-3000:] or '(nothing)')}\n\n"
        f"Resolve it on the branch, then remove the `{CONFLICT}` label."
    )
