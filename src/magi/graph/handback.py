"""The end of a writer's turn in its clone: guard, rescue commit, fetch back, scrub.

An implementer (and the fixer) works in a clone of its own (``magi.git.clones``). Around its
turn magi watches two git directories: the clone's, whose every change is that seat's doing
and is charged to it alone, and the repository's, which no seat should touch at all and
which several seats may have reached in a parallel wave unjailed (what is found there names
the other seats that were working). Then magi commits what the seat left uncommitted, under
the neutral identity, fetches exactly the seat's branch back into the repository, checks it
descends from the base, strips trailers that slipped past the commit-msg hook, and puts the
clone on the head the repository now has.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from magi.errors import RepoError
from magi.git import clones, refs_guard
from magi.git.checkout import damage
from magi.git.repo import Git, Made
from magi.git.scrub import scrub_branch
from magi.git.warm_index import WarmIndex
from magi.git.worktree_guard import GuardSnapshot, restore
from magi.graph.context import Context
from magi.graph.guard import alongside, qualify
from magi.graph.prep import hooks_dir


@dataclass(frozen=True)
class Watch:
    """The two git directories as they were before the turn."""

    repo: GuardSnapshot
    own: GuardSnapshot | None  # None: not a clone (the user's tree a `magi review` works in)
    refs: refs_guard.RefSnapshot | None
    path: Path | None = None  # the clone's real path before the turn (no link followed since)
    git: Git | None = None  # the clone's own git (``clones.git_of``), found before the turn
    warm: WarmIndex | None = None  # the clone's index, refreshed while the seat works

    def abandon(self) -> None:
        """The turn ends with no hand-back (an error, a stop): the index copy goes."""
        if self.warm is not None:
            self.warm.drop()


@dataclass
class HandBack:
    """What the turn left: the branch's head in the repository and what magi found."""

    head: str
    own: list[str] = field(default_factory=list)  # the seat's own doing
    shared: list[str] = field(default_factory=list)  # in the repository's git directory
    sabotaged: str | None = None
    rescued: bool = False
    scrubbed: int = 0
    commits: int | None = None  # since..head, when the hand-back counted them on its way
    cleared: list[str] = field(default_factory=list)  # stale lock files removed


def watch(
    ctx: Context, tree: Path, repo: GuardSnapshot | None = None, *, before: bool = True
) -> Watch:
    """Snapshots before a turn; ``repo``: one already taken for the whole wave. ``before``:
    False for a turn already over (a resume's), whose clone is snapshotted as the seat left
    it: nothing of it is then trusted to refresh an index with."""
    if not clones.is_clone(tree):
        return Watch(repo=repo or GuardSnapshot.take(ctx.git, [tree]), own=None, refs=None)
    own = clones.git_of(ctx.git, tree)
    snap = GuardSnapshot.take(own)
    watched = Watch(
        repo=repo if repo is not None else GuardSnapshot.take(ctx.git),
        own=snap,
        refs=refs_guard.take(own),
        path=Path(tree).resolve(),
        git=own,
        # Refreshed with the config the clone has now, before the seat can change it.
        warm=WarmIndex(own, tree, snap.files.get(snap.common / "config")) if before else None,
    )
    if watched.warm is not None:
        watched.warm.start()  # last: nothing after it can fail and leave its timer running
    return watched


def clear_stale_locks(tree: Path, branch: str) -> list[str]:
    """Lock files a killed seat left mid-git (its whole process group is dead by now).

    A timeout, a failover or Ctrl-C kills an agent wherever it is, possibly inside
    ``git commit``; the lock it held would stop every later git command in that clone.
    """
    gd = clones.git_dir(tree)
    cleared = []
    for lock in (gd / "index.lock", gd / "HEAD.lock", gd / f"refs/heads/{branch}.lock"):
        if lock.is_file():
            lock.unlink()
            cleared.append(lock.name)
    return cleared


def hand_back(
    ctx: Context,
    *,
    seat: str,
    tree: Path,
    branch: str,
    since: str,
    watched: Watch,
    message: str,
) -> HandBack:
    """After the turn: restore, commit, fetch back. ``since``: the branch's head before it."""
    if watched.own is None or watched.refs is None:
        return _in_place(
            ctx, seat=seat, tree=tree, branch=branch, since=since, watched=watched, message=message
        )
    try:
        return _from_clone(
            ctx,
            seat=seat,
            tree=tree,
            branch=branch,
            since=since,
            watched=watched,
            message=message,
            snaps=(watched.own, watched.refs),
        )
    finally:
        watched.abandon()  # used and installed by now, or not to be used


def _from_clone(
    ctx: Context,
    *,
    seat: str,
    tree: Path,
    branch: str,
    since: str,
    watched: Watch,
    message: str,
    snaps: tuple[GuardSnapshot, refs_guard.RefSnapshot],
) -> HandBack:
    base = ctx.run.base_sha or ctx.run.base
    own_git = watched.git or clones.git_of(ctx.git, tree)
    ref = f"refs/heads/{branch}"
    # Asked before the guard restores anything: files put back into a deleted git
    # directory would make the tree look sound.
    sabotaged = clones.damage(tree)
    if sabotaged is None and Path(tree).resolve() != watched.path:
        sabotaged = "its tree now resolves somewhere else (a link on its path)"
    with ctx.lock:
        shared = qualify(restore(ctx.git, watched.repo), alongside(ctx, seat))
    if sabotaged is not None:
        watched.abandon()  # before the tree is made again under a refresh still running
        how = clones.adopt_or_make(ctx.git, tree, branch=branch, base=since, hooks=hooks_dir(ctx))
        clones.sync(ctx.git, tree, branch, since)
        ctx.git.run("update-ref", ref, since)
        note = f"sabotaged: {sabotaged}; nothing rescued, tree {how}"
        return HandBack(since, own=[note], shared=shared, sabotaged=sabotaged)
    own = restore(own_git, snaps[0])
    own += refs_guard.restore(own_git, snaps[1], allowed={ref})
    out = HandBack(since, own=own, shared=shared, cleared=clear_stale_locks(tree, branch))
    on = _on_branch(own_git, tree, ref)
    if on != ref:
        own_git.run("checkout", "-q", "-f", branch, cwd=tree)
        out.own.append(f"left its tree on {on or 'a detached HEAD'}; put back on {branch}")
    # Taken once nothing else of magi's will change the clone's index before the commit.
    index = watched.warm.take() if watched.warm is not None else None
    if index is not None and watched.warm is not None and watched.warm.attributes_changed():
        # The clone's own index has every file read again under the new attributes; the
        # copy would stage the files the seat left alone as they were read before.
        watched.abandon()
        index = None
    straight = _straight_back(ctx, own_git, tree, branch, since, message, index)
    if straight is None:
        made = own_git.commit_all(tree, message, index=index)
        fetched = clones.fetch_back(ctx.git, tree, branch=branch, base=base, fallback=since)
    else:
        fetched, made = straight
    if index is not None and watched.warm is not None:
        watched.warm.install()  # staged as `add -A` would have staged the clone's own
    out.rescued = made is not None
    out.own += fetched.violations
    # The fetch read base..head; when the turn began at the base that is the span to scrub.
    read = fetched.commits if since == base and not fetched.violations else None
    out.scrubbed = scrub_branch(ctx.git, base=since, branch=branch, commits=read)
    if read is not None:
        out.commits = len(read)  # the scrub rewrites messages, never how many
    if fetched.violations or out.scrubbed:  # the repository's branch is not the clone's now
        out.head = ctx.git.rev_parse(ref)
        clones.sync(ctx.git, tree, branch, out.head)
    else:
        out.head = fetched.head  # fetched from the clone's branch, which is its HEAD
    return out


def _on_branch(own_git: Git, tree: Path, ref: str) -> str:
    """The ref the clone's HEAD names ('' when detached). Read from the HEAD file when it
    says exactly ``ref`` (what git itself would read there: ``damage`` has made sure it is
    no link); anything else is asked of git, which words what it finds."""
    try:
        if clones.git_dir(tree).joinpath("HEAD").read_bytes() == f"ref: {ref}\n".encode():
            return ref
    except OSError:
        pass
    return own_git.run("symbolic-ref", "-q", "HEAD", cwd=tree, check=False).strip()


_SHARED = "handback.shared"  # ctx.cache: the repository is shared by a group of users


def _shared(ctx: Context) -> bool:
    """The repository sets ``core.sharedRepository``: the objects its own git writes get
    the group's permissions, which magi's git in a clone (the clone's config) would not
    give them; such a repository gets the fetch, whose objects its own config writes."""
    with ctx.lock:
        known = ctx.cache.get(_SHARED)
    if isinstance(known, bool):
        return known
    value = ctx.git.run("config", "--get", "core.sharedRepository", check=False).strip()
    shared = value.lower() not in ("", "false", "umask", "0", "no", "off")
    with ctx.lock:
        ctx.cache[_SHARED] = shared
    return shared


def _straight_back(
    ctx: Context,
    own_git: Git,
    tree: Path,
    branch: str,
    since: str,
    message: str,
    index: Path | None = None,
) -> tuple[clones.Fetched, Made | None] | None:
    """A clone whose own store is empty needs no fetch: magi's commit is written straight
    into the repository's store and the branch set there (``clones.take_back``). None when
    that cannot be (the seat wrote objects of its own, or its index names one the
    repository lacks): the commit is then made in the clone and fetched as ever."""
    if not clones.owns_no_objects(tree) or _shared(ctx):
        return None
    try:
        made = own_git.commit_all(tree, message, objects=clones.objects(ctx.git), index=index)
    except RepoError:
        return None
    base = ctx.run.base_sha or ctx.run.base
    back = clones.take_back(ctx.git, tree, branch=branch, base=base, fallback=since, made=made)
    return back, made


def _in_place(
    ctx: Context, *, seat: str, tree: Path, branch: str, since: str, watched: Watch, message: str
) -> HandBack:
    """A tree of the repository itself (``magi review`` of a branch checked out by the user):
    the commits are already in the repository; a damaged tree is reported, never remade."""
    ref = f"refs/heads/{branch}"
    sabotaged = damage(ctx.git, tree, branch)
    with ctx.lock:
        shared = qualify(restore(ctx.git, watched.repo), alongside(ctx, seat))
    if sabotaged is not None:
        note = f"sabotaged: {sabotaged}; nothing rescued"
        return HandBack(ctx.git.rev_parse(ref), shared=[*shared, note], sabotaged=sabotaged)
    out = HandBack(since, shared=shared)
    out.rescued = ctx.git.commit_all(tree, message) is not None
    out.scrubbed = scrub_branch(ctx.git, base=since, branch=branch)
    out.head = ctx.git.rev_parse(ref)
    return out
