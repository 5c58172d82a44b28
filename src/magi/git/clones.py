"""Candidate clones: each implementer's tree is a repository of its own, borrowing objects.

With linked worktrees every candidate shared one git directory: an agent could plant a
hook, a filter or ``core.fsmonitor`` in the shared config, or move another candidate's
branch, and what the guard found after a parallel wave could not be pinned on one seat.
A candidate's tree is now ``git init`` plus ``objects/info/alternates`` naming the user's
object store -- what ``git clone --shared`` does, without copying the user's refs (a clone
of a repository with thousands of refs would write them all, and show a candidate every
branch): objects are borrowed read-only, refs, config, hooks and index are its own.

magi brings a candidate's work back itself: ``fetch_back`` fetches exactly the candidate's
branch from its git directory into ``refs/heads/magi/<run>/<label>`` of the user's
repository with magi's hardened git, then checks that it descends from the base. The fetch
runs ``git upload-pack`` in the candidate's git directory, which git keeps from running
anything a repository's own config names ("upload-pack tries to avoid any dangerous
configuration options or hooks from the repository it's serving",
https://git-scm.com/docs/git-upload-pack#_security); the tamper guard has restored that
directory before the fetch anyway. A clone whose own object store is still empty (the seat
never ran ``git add`` or ``git commit``: magi's rescue commit wrote straight into the
repository's store) needs no fetch: ``take_back`` checks what the fetch would have (every
object the head reaches is present), sets the branch, and checks its descent the same.

Everything here runs git through ``magi.git.repo``, so nothing a candidate's config names
(hooks, fsmonitor, pager, ...) is run by magi; what ``-c`` cannot pin, the guard restores.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from magi.errors import RepoError
from magi.git.checkout import discard
from magi.git.repo import Git, Made
from magi.state.failpoint import failpoint

_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # already a commit's name: no rev-parse
_WATCHED_DIRS = ("hooks", "info")  # made empty, so that a jail can bind them read-only
# What a candidate's git directory holds that must be its own, never a link out of it.
_KEPT: tuple[str, ...] = ("HEAD", "config", "config.worktree", "objects", "refs", "packed-refs")
_KEPT += ("index", *_WATCHED_DIRS)


def git_dir(tree: Path) -> Path:
    return Path(tree) / ".git"


def is_clone(tree: Path) -> bool:
    """A tree with a git directory of its own (not a linked worktree's ``.git`` file)."""
    gd = git_dir(tree)
    return gd.is_dir() and not gd.is_symlink()


def made_by_magi(tree: Path, root: Path) -> bool:
    """Under the run's worktree root: a tree magi may remove and make again. Anything else
    (the user's checkout a ``magi review`` works in) is never touched that way."""
    return Path(tree).resolve().is_relative_to(Path(root).resolve())


def git_of(git: Git, tree: Path) -> Git:
    """magi's hardened git rooted at a candidate's clone (magi's hooks dir, if any, kept).

    A clone's git directory is its ``.git``, a real directory where magi made it: known
    without asking git (a ``rev-parse`` a seat turn). A ``.git`` that is anything else (a
    seat swapped it for a link or a gitfile) is left for git to resolve, and ``damage``
    refuses such a clone anyway."""
    own = Git(Path(tree), hooks_dir=git.hooks_dir)
    gd = Path(tree) / ".git"
    if gd.is_dir() and not gd.is_symlink():
        own.known_common_dir(gd.resolve())
    return own


def objects(git: Git) -> Path:
    """The user's object store, which every clone borrows."""
    return git.common_dir().resolve() / "objects"


def _quote(value: str) -> str:
    # https://git-scm.com/docs/git-config#_syntax: a value in double quotes, \ and " escaped
    if "\n" in value:
        raise RepoError(f"a path git cannot store in its config (a newline): {value!r}")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def make(git: Git, tree: Path, *, branch: str, start: str, hooks: Path | None = None) -> str:
    """A fresh clone at ``tree``, its own ``branch`` at ``start``, checked out; its head.

    Whatever was at ``tree`` goes first (a half-made clone a killed prep left, an old linked
    worktree), so this is safe to call again. ``hooks``: magi's hooks directory, which the
    agent's own commits then run (the commit-msg hook that strips trailers).
    """
    sha = git.rev_parse(f"{start}^{{commit}}")
    return make_at(git, Path(tree), branch=branch, sha=sha, hooks=hooks)


PARTIAL = ".partial"  # a clone being made: ``.<label>.partial`` beside where it goes


def partial_of(tree: Path) -> Path:
    """Where the clone for ``tree`` is made before it is renamed into place."""
    return Path(tree).parent / f".{Path(tree).name}{PARTIAL}"


@dataclass(frozen=True)
class Skeleton:
    """An empty git directory as ``git init`` made it: its folders and files, relative."""

    dirs: tuple[str, ...]
    files: tuple[tuple[str, bytes], ...]

    @classmethod
    def read(cls, gd: Path) -> Skeleton:
        """The git directory ``git init`` just made at ``gd`` (nothing else written yet)."""
        dirs: list[str] = []
        files: list[tuple[str, bytes]] = []
        for here, subs, names in os.walk(gd):
            rel = Path(here).relative_to(gd)
            dirs += [str(rel / d) for d in sorted(subs)]
            files += [(str(rel / n), (Path(here) / n).read_bytes()) for n in sorted(names)]
        return cls(tuple(dirs), tuple(files))

    def lay(self, gd: Path, branch: str) -> None:
        """The same git directory at ``gd``, its HEAD on ``branch``."""
        gd.mkdir()
        for d in self.dirs:
            (gd / d).mkdir()
        for name, data in self.files:
            (gd / name).write_bytes(
                f"ref: refs/heads/{branch}\n".encode() if name == "HEAD" else data
            )


def make_at(
    git: Git,
    tree: Path,
    *,
    branch: str,
    sha: str,
    hooks: Path | None = None,
    like: Skeleton | None = None,
    made: Callable[[Skeleton], None] | None = None,
) -> str:
    """``make`` at a commit already named by its full sha (prep's base): no rev-parse.

    Kill-safe at every instant: the clone is made whole under a temporary name (git
    directory, alternates, its branch, magi's hooks, the checkout) and only then renamed
    into place, so whatever stands at ``tree`` is either an earlier whole clone or nothing
    of this call; a partial one a kill left is removed by the next call or by fold.
    ``like``: a git directory ``git init`` made for another clone, laid out instead of
    running one; ``made``: told this clone's, as ``git init`` made it, before anything else
    is written into it (prep's first clone, whose git directory the others copy).
    """
    # The parent resolved, never the tree itself: a tree an agent replaced with a link is
    # unlinked, and whatever the link named is left alone.
    tree = Path(tree).parent.resolve() / Path(tree).name
    tree.parent.mkdir(parents=True, exist_ok=True)
    work = partial_of(tree)
    if work.exists() or work.is_symlink():
        discard(git, work)
    gd = git_dir(work)
    if like is None:
        fmt = git.object_format()
        init = ["init", "--quiet", "--template=", f"--object-format={fmt}", "-b", branch]
        git.run(*init, str(work))
        if made is not None:
            made(Skeleton.read(gd))
    else:
        work.mkdir()
        like.lay(gd, branch)
    failpoint(f"clone:init:{tree.name}")
    (gd / "objects" / "info").mkdir(parents=True, exist_ok=True)
    (gd / "objects" / "info" / "alternates").write_text(f"{objects(git)}\n")
    failpoint(f"clone:alternates:{tree.name}")
    for name in _WATCHED_DIRS:
        (gd / name).mkdir(exist_ok=True)
    ref = gd / "refs" / "heads" / branch
    ref.parent.mkdir(parents=True, exist_ok=True)
    ref.write_text(f"{sha}\n")
    if hooks is not None:
        with (gd / "config").open("a") as f:
            f.write(f"[core]\n\thooksPath = {_quote(str(Path(hooks).resolve()))}\n")
    failpoint(f"clone:ref:{tree.name}")
    git_of(git, work).run("read-tree", "--reset", "-u", "HEAD", cwd=work)
    failpoint(f"clone:checkout:{tree.name}")
    if tree.exists() or tree.is_symlink():
        discard(git, tree)  # what stood there (an old clone being made again) goes last
    work.rename(tree)
    failpoint(f"clone:renamed:{tree.name}")
    return sha


def damage(tree: Path) -> str | None:
    """Why nothing may be committed from the clone at ``tree``; None if sound. A HEAD left on
    another ref is not damage: the work is put back on its branch (``on_branch``).

    Read from files alone, before the guard restores anything: git is not run in a git
    directory an agent may have broken.
    """
    tree = Path(tree)
    if tree.is_symlink():  # git would follow it into whatever it names: the user's checkout
        return "its tree was replaced by a link"
    if not tree.is_dir():
        return "its tree is gone"
    if not is_clone(tree):
        return "its tree's .git directory is missing or replaced"
    gd = git_dir(tree)
    if (gd / "commondir").exists() or (gd / "commondir").is_symlink():
        # git reads a commondir file in any git directory, not only a linked worktree's:
        # config (filters, fsmonitor), refs and objects would come from the one it names.
        return "its git directory defers to another (a commondir file)"
    for name in _KEPT:
        if (gd / name).is_symlink():
            return f"its git directory's {name} was replaced by a link"
    if not (gd / "HEAD").is_file():
        return "its git directory has no HEAD"
    return None


def on_branch(tree: Path, branch: str) -> bool:
    try:
        head = (git_dir(tree) / "HEAD").read_text(errors="replace").strip()
    except OSError:
        return False
    return head == f"ref: refs/heads/{branch}"


def whole(tree: Path) -> bool:
    """A clone that was finished: it borrows the user's objects and was checked out. Only a
    clone made before clones were renamed into place can be caught without either; a clone
    an agent worked in may lack its index (``rm .git/index`` mends a broken one), which is
    no damage to its work, so this is asked of adoption alone, never of a handback."""
    gd = git_dir(tree)
    return (gd / "objects" / "info" / "alternates").is_file() and (gd / "index").is_file()


def sound(tree: Path, branch: str) -> bool:
    """A clone prep may adopt as it is: undamaged, whole, and on ``branch``."""
    return damage(tree) is None and whole(tree) and on_branch(tree, branch)


def adopt_or_make(git: Git, tree: Path, *, branch: str, base: str, hooks: Path | None) -> str:
    """Leave ``tree`` a sound clone of ``branch``: "adopted", "recreated" or "created".

    Made again on the repository's ``branch`` when magi already fetched work there (a resume
    after fold, or after a kill), else on ``base``.
    """
    if sound(tree, branch):
        return "adopted"
    existed = Path(tree).exists()
    fetched = git.run("rev-parse", "--verify", "-q", f"refs/heads/{branch}^{{commit}}", check=False)
    sha = fetched.strip() or (base if _SHA.fullmatch(base) else git.rev_parse(f"{base}^{{commit}}"))
    make_at(git, tree, branch=branch, sha=sha, hooks=hooks)
    return "recreated" if existed else "created"


def sync(git: Git, tree: Path, branch: str, head: str) -> None:
    """Put the clone's ``branch`` (checked out, clean) on ``head``, an object magi has.

    After a trailer scrub rewrote the branch in the repository, and before a fixer works on
    the winner: the clone borrows every object of the repository, so no fetch is needed.
    """
    own = git_of(git, tree)
    if own.run("rev-parse", "--verify", "-q", "HEAD", cwd=tree, check=False).strip() == head:
        return
    own.run("update-ref", f"refs/heads/{branch}", head, cwd=tree)
    own.run("reset", "-q", "--hard", head, cwd=tree)


@dataclass(frozen=True)
class Fetched:
    """What ``fetch_back`` brought: the branch's head in the repository, and what was wrong."""

    head: str
    violations: tuple[str, ...] = ()
    commits: list[tuple[str, str]] | None = None  # base..head (sha, message), oldest first


def owns_no_objects(tree: Path) -> bool:
    """The clone's own object store holds nothing: every object it can name is borrowed.

    Read from the directory alone. Only what ``git init`` makes counts as empty (``info``
    and an empty ``pack``); a loose-object folder with anything in it, a link, a file, or
    a folder git would write only while receiving objects makes it not so.
    """
    store = git_dir(tree) / "objects"
    if store.is_symlink() or not store.is_dir():
        return False
    with os.scandir(store) as entries:
        for e in entries:
            if e.is_symlink() or not e.is_dir(follow_symlinks=False):
                return False
            if e.name == "info":
                continue
            with os.scandir(e.path) as inside:
                if any(True for _ in inside):
                    return False
    return True


def take_back(
    git: Git, tree: Path, *, branch: str, base: str, fallback: str, made: Made | None = None
) -> Fetched:
    """``fetch_back`` for a clone that ``owns_no_objects``: every object its branch can name
    is in the repository's store already (or missing), so the branch is set there without
    a fetch (a process and its upload-pack and unpack, 12 to 15 ms at the end of each
    turn), after the check a fetch makes (every object the head reaches is present: one
    `rev-list --objects`), and then checked as a fetched one is. ``made``: the commit magi
    just made on the clone's branch; one whose parent is ``base`` is the whole span, which
    needs no reading back.

    A head the repository cannot resolve to a commit (the seat pointed its branch through
    an alternates file of its own) is not taken, as an unfetchable branch is not.
    """
    ref = f"refs/heads/{branch}"
    try:
        head = made.sha if made is not None else git_of(git, tree).rev_parse(f"{ref}^{{commit}}")
        if not _SHA.fullmatch(head):
            raise RepoError(f"not a commit: {head!r}")
        # What a fetch would have checked: every object the head reaches is here. A seat
        # can name objects that are not (its index's cached trees, or, unjailed, objects it
        # wrote into the repository's store itself), and `update-ref` checks only the tip.
        # Asked beside the ref's update, which the except below puts back if it fails.
        since = base if _SHA.fullmatch(base) else git.rev_parse(f"{base}^{{commit}}")
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="git-reach") as beside:
            reach = beside.submit(git.run, "rev-list", "--objects", "--quiet", head, "--not", since)
            git.run("update-ref", ref, head)
            reach.result()
    except (RepoError, OSError) as e:  # whatever failed, the ref goes back where it was
        git.run("update-ref", ref, fallback)
        return Fetched(fallback, (f"its branch could not be taken back ({e}); not taken",))
    if made is not None and made.parent == base:
        return Fetched(made.sha, commits=[(made.sha, made.message)])
    return _checked(git, ref, base=base, fallback=fallback)


def fetch_back(git: Git, tree: Path, *, branch: str, base: str, fallback: str) -> Fetched:
    """Exactly the clone's ``branch`` into the repository's ``branch``, checked.

    A branch that cannot be fetched, or whose history does not descend from ``base``, is
    not taken: the repository's branch is put on ``fallback`` (where it was before the
    turn) and the reason is returned.
    """
    ref = f"refs/heads/{branch}"
    try:
        git.run(
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-recurse-submodules",
            "--no-auto-gc",  # not even a process to find that gc.auto is 0
            "--end-of-options",
            str(git_dir(Path(tree)).resolve()),
            f"+{ref}:{ref}",
        )
    except RepoError as e:
        git.run("update-ref", ref, fallback)
        return Fetched(fallback, (f"its branch could not be fetched ({e}); not taken",))
    return _checked(git, ref, base=base, fallback=fallback)


def _checked(git: Git, ref: str, *, base: str, fallback: str) -> Fetched:
    """The repository's ``ref`` is taken only if it descends from ``base``."""
    span = git.span_log(base, ref)
    if not span.descends:
        git.run("update-ref", ref, fallback)
        why = f"its branch ({span.head[:12]}) does not descend from the base {base[:12]}; not taken"
        return Fetched(fallback, (why,))
    return Fetched(span.head, commits=span.commits)
