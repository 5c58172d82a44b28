"""The ref guard: every ref as it was before a wave, put back after each seat's turn.

A seat works in a worktree of the user's repository, and every worktree shares one ref
store: an implementer can move ``refs/heads/main``, create a tag, rewrite a note, delete
another candidate's branch, or pack the refs and edit ``packed-refs`` by hand. magi's own
``magi/<run>/*`` branches were the only refs it looked at; this module looks at all of them
(``for-each-ref`` sees loose and packed refs alike, ``packed-refs`` is compared byte for
byte besides) and restores, after each turn, whatever changed outside the refs that turn
was allowed to move (its own candidate branch). Each change is one violation line naming
the ref and both values, so the commit a seat pointed ``main`` at stays findable.

``pin`` is the other half: the heads magi recorded (what was verified and judged) are put
back on their branches after every seat turn and checked before tally, fold and merge, so
what merges is what was judged.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from magi.errors import RepoError
from magi.git.repo import Git

_SYM = "ref: "  # a symbolic ref's value is stored as "ref: <target>", like a HEAD file


@dataclass(frozen=True)
class RefSnapshot:
    """Every ref's value (a sha, or ``ref: <target>``) and the raw ``packed-refs``."""

    refs: Mapping[str, str]
    packed: bytes | None

    @classmethod
    def take(cls, git: Git) -> RefSnapshot:
        return cls(_read_refs(git), _read_packed(git))


def take(git: Git) -> RefSnapshot:
    """``RefSnapshot.take``: before each wave of seat turns."""
    return RefSnapshot.take(git)


def restore(git: Git, snapshot: RefSnapshot, *, allowed: Collection[str] = ()) -> list[str]:
    """Put back every ref outside ``allowed`` (full ref names) as ``snapshot`` has it.

    Returns one line per ref changed (empty: nothing was). Allowed refs keep whatever value
    they have now, even when ``packed-refs`` had to be restored from under them.
    """
    return restore_reading(git, snapshot, allowed=allowed)[0]


def restore_reading(
    git: Git, snapshot: RefSnapshot, *, allowed: Collection[str] = ()
) -> tuple[list[str], dict[str, str]]:
    """``restore``, and every ref's value once it is done: one ``for-each-ref`` serves
    both the restore and a ``pin`` after it (``pin(..., now=)``)."""
    violations: list[str] = []
    packed_now = _read_packed(git)
    now: dict[str, str] | None
    try:
        now = _read_refs(git)
    except RepoError:
        now = None  # packed-refs too broken for git to read: its bytes go back first
    if packed_now != snapshot.packed:
        _write_packed(git, snapshot.packed)
        violations.append("packed-refs rewritten; restored")
        if now is not None:
            # The old bytes may have taken an allowed ref back (an agent that packed its own
            # branch): give each allowed ref its current value again, loose.
            _apply(git, {r: now.get(r) for r in allowed if now.get(r) != snapshot.refs.get(r)})
        now = None
    if now is None:
        now = _read_refs(git)
    fixes: dict[str, str | None] = {}
    for ref in sorted(set(snapshot.refs) | set(now)):
        before, after = snapshot.refs.get(ref), now.get(ref)
        if ref in allowed or before == after:
            continue
        fixes[ref] = before
        violations.append(_describe(ref, before, after))
    _apply(git, fixes)
    after_all = {r: v for r, v in now.items() if r not in fixes}
    after_all.update({r: v for r, v in fixes.items() if v is not None})
    return violations, after_all


def pin(
    git: Git,
    heads: Mapping[str, str],
    *,
    fix: bool = True,
    now: Mapping[str, str] | None = None,
) -> list[str]:
    """Each branch (short name) at its recorded sha; the ones that moved, put back if ``fix``.

    ``now``: every ref's value as just read (``restore_reading``), instead of one
    ``rev-parse`` per branch. A branch turned into a symbolic ref has moved either way.
    """
    off = off_heads(git, heads, now=now)
    moved = [
        f"{branch} {f'moved to {res[:12]}' if res else 'deleted'}, recorded {heads[branch][:12]}"
        + ("; put back" if fix else "")
        for branch, res in off.items()
    ]
    if fix:
        put(git, {branch: heads[branch] for branch in off})
    return moved


def off_heads(
    git: Git, heads: Mapping[str, str], *, now: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Each branch (short name) of ``heads`` that is not at its sha: what it holds now ('':
    gone), from one ``for-each-ref`` (or ``now``, every ref's value as just read)."""
    if now is None and heads:
        now = _read_refs(git)
    out: dict[str, str] = {}
    for branch, sha in sorted(heads.items()):
        res = (now or {}).get(f"refs/heads/{branch}", "")
        if res != sha:
            out[branch] = res
    return out


def put(git: Git, heads: Mapping[str, str]) -> None:
    """Each branch (short name) at its sha, in one ``update-ref``; a symbolic ref planted in
    a branch's place is replaced, never written through."""
    _apply(git, {f"refs/heads/{branch}": sha for branch, sha in heads.items()})


# -- reading ----------------------------------------------------------------------------


def _read_refs(git: Git) -> dict[str, str]:
    out = git.run("for-each-ref", "--format=%(refname)%00%(objectname)%00%(symref)")
    refs: dict[str, str] = {}
    for line in out.splitlines():
        name, sha, symref = [*line.split("\0"), "", ""][:3]
        refs[name] = f"{_SYM}{symref}" if symref else sha
    return refs


def _packed_path(git: Git) -> Path:
    return git.common_dir() / "packed-refs"


def _read_packed(git: Git) -> bytes | None:
    try:
        return _packed_path(git).read_bytes()
    except FileNotFoundError:
        return None


def _write_packed(git: Git, data: bytes | None) -> None:
    path = _packed_path(git)
    if path.is_symlink() or path.is_dir():
        path.unlink() if path.is_symlink() else os.rmdir(path)
    if data is None:
        path.unlink(missing_ok=True)
        return
    # Beside, then rename over: a concurrent git never reads half a file.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".packed-refs.", suffix=".magi")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


# -- writing ----------------------------------------------------------------------------


def _apply(git: Git, values: Mapping[str, str | None]) -> None:
    """Set each ref to its value (a sha, ``ref: <target>``) or delete it (None), in one go."""
    lines: list[str] = []
    for ref, value in sorted(values.items()):
        if value is not None and value.startswith(_SYM):
            git.run("symbolic-ref", ref, value.removeprefix(_SYM))
        elif value is None:
            lines.append(f"delete {ref}\n")
        else:
            lines.append(f"update {ref} {value}\n")
    if lines:
        # --no-deref: a symbolic ref an agent planted is replaced, never written through.
        git.run("update-ref", "--no-deref", "--stdin", input="".join(lines))


def _describe(ref: str, before: str | None, after: str | None) -> str:
    def show(v: str) -> str:
        return v if v.startswith(_SYM) else v[:12]

    if before is None:
        return f"{ref} created at {show(after or '')}; deleted"
    if after is None:
        return f"{ref} deleted; restored to {show(before)}"
    # The full sha of what the seat pointed the ref at: the commit stays findable.
    return f"{ref} moved from {show(before)} to {after}; restored"
