"""The git adapter: every git command magi runs, under one locked-down config and environment.

Agents write inside git directories magi then runs git in -- a candidate's own clone
(``magi.git.clones``), a judge's worktree of the repository's -- so any file git reads as
configuration (hooks, ``config``, ``info/attributes``) may have been planted by an agent
waiting for magi to run git. Every command therefore goes through ``Git._exec``, which
pins the settings below on the command line (``-c`` beats every config file) and runs git
in an environment of magi's choosing. What ``-c`` cannot reach -- drivers whose names an
agent chooses (``filter.<x>.clean``, ``diff.<x>.textconv``), ``include.path`` -- is what
``magi.git.worktree_guard`` restores after every agent turn.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import IO, NamedTuple, cast

from magi.core.compete.blind import strip_trailers
from magi.errors import RepoError
from magi.model.run import FileStat

NEUTRAL_NAME = "magi"
NEUTRAL_EMAIL = "magi@localhost.invalid"

# Untracked caches (``__pycache__/``, ``.pytest_cache/``, ...) a commit of everything left
# out, under the repository's own ignores: a repository without a .gitignore got them in
# its rescued candidate. It stands in for the user's global excludes file, which differs
# from one runner to the next and is no rule of the repository's.
RESCUE_IGNORE = str(resources.files("magi") / "templates" / "rescue.gitignore")

_NO_HOOKS = os.devnull  # a hooks "directory" in which no hook can exist

# Semantics of each key: https://git-scm.com/docs/git-config
_LOCKDOWN: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),  # a path here is a program run by status/diff/add
    ("core.untrackedCache", "false"),  # read commands must not rewrite the index
    ("core.pager", "cat"),  # belt to --no-pager's braces: never spawn a configured pager
    ("core.editor", ":"),  # nothing magi runs may block on, or run, an editor
    ("core.askPass", ""),  # empty means "no askpass program" (GIT_TERMINAL_PROMPT=0 too)
    ("color.ui", "false"),  # escape codes would corrupt parsed output and judge packets
    ("commit.gpgSign", "false"),  # gpg.program is agent-writable; neutral commits are unsigned
    ("tag.gpgSign", "false"),
    ("log.showSignature", "false"),  # verifying a signature runs gpg.program too
    ("submodule.recurse", "false"),  # would turn checkout and worktree add into fetches
    ("protocol.ext.allow", "never"),  # ext:: URLs are shell commands
    ("gc.auto", "0"),  # no detached background gc racing worktree removal or the guard
    ("maintenance.auto", "false"),
    ("diff.noprefix", "false"),  # judges and parsers expect a/ and b/ prefixes
    ("diff.mnemonicPrefix", "false"),
    ("i18n.logOutputEncoding", "UTF-8"),  # commit messages are decoded as UTF-8
    ("core.useReplaceRefs", "false"),  # refs/replace is agent-writable (also via env below)
)
# diff.external is deliberately absent: an empty value makes git try to run "" and fail.
# Every diff-family command passes --no-ext-diff instead (and --no-textconv, for drivers
# whose names an agent picks).
_DIFF_FLAGS = ("--no-color", "--no-ext-diff", "--no-textconv", "--no-relative")

_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",  # /etc/gitconfig is nobody's decision about this run
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",  # a credential prompt would hang an unattended run
    "GIT_OPTIONAL_LOCKS": "0",  # status may not take index.lock: judges' trees stay untouched
    "GIT_NO_REPLACE_OBJECTS": "1",
    "LC_ALL": "C",  # stable, English messages to parse and to quote in errors
}
_CHUNK = 1 << 16
_REFRESH_TIMEOUT_S = 10.0  # a refresh of a tree a seat works in (``refresh_index``)
_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _env(extra: dict[str, str] | None = None) -> dict[bytes, bytes]:
    """git's environment: this process's, less every ``GIT_*`` it had (GIT_DIR,
    GIT_WORK_TREE, GIT_INDEX_FILE, GIT_CONFIG_PARAMETERS, GIT_EXTERNAL_DIFF, ...: they would
    redirect or reconfigure git), with magi's ``_ENV`` and ``extra`` on top.

    As bytes, built again only when the process's environment changed: a run starts some
    seventy git processes, and decoding then encoding every variable for each was a tenth
    of what starting one cost magi."""
    global _BASE
    # CPython keeps the environment as a dict of bytes (what os.environ and os.environb
    # read and write through): comparing it with the copy taken last time is one C loop.
    now = getattr(os.environ, "_data", None)
    cached = _BASE
    if cached is None or not isinstance(now, dict) or cached[0] != now:
        here = dict(os.environb)
        base = {k: v for k, v in here.items() if not k.startswith(b"GIT_")}
        base.update((os.fsencode(k), os.fsencode(v)) for k, v in _ENV.items())
        cached = _BASE = (here, base)
    if not extra:
        return cached[1]  # never changed by its users: subprocess only reads it
    return {**cached[1], **{os.fsencode(k): os.fsencode(v) for k, v in extra.items()}}


_BASE: tuple[dict[bytes, bytes], dict[bytes, bytes]] | None = None  # (environ then, env)


def _argv(args: list[str], hooks: str) -> list[str]:
    argv = ["git", "--no-pager", "-c", f"core.hooksPath={hooks}"]
    for key, value in _LOCKDOWN:
        argv += ["-c", f"{key}={value}"]
    return argv + args


def _rev(ref: str) -> str:
    # Revisions come from magi, but one that starts with "-" would be parsed as an option.
    if not ref or ref.startswith("-"):
        raise RepoError(f"not a revision: {ref!r}")
    return ref


def _show(args: list[str]) -> str:
    return "git " + shlex.join(args)


def _diff(base: str, head: str, *flags: str) -> list[str]:
    return ["diff", *flags, *_DIFF_FLAGS, "--end-of-options", _rev(base), _rev(head), "--"]


def _span(base: str, head: str) -> list[str]:
    return ["--end-of-options", f"{_rev(base)}..{_rev(head)}", "--"]


class AttributeFiles(NamedTuple):
    """Where a ``.gitattributes`` could apply to what an index holds (``attribute_files``)."""

    folders: tuple[str, ...]
    tracked: frozenset[str]


class Made(NamedTuple):
    """A commit ``commit_all`` made: its id, its parent ('' for a root) and its message as
    ``span_log`` reads it back."""

    sha: str
    parent: str
    message: str


@dataclass(frozen=True)
class Span:
    """``base..ref``: see ``Git.span_log``."""

    head: str
    commits: list[tuple[str, str]]  # (sha, message), oldest first
    descends: bool


def _failed(args: list[str], code: int, where: Path, stderr: bytes) -> RepoError:
    err = stderr.decode("utf-8", "replace").strip()
    return RepoError(f"{_show(args)} failed (exit {code}) in {where}: {err}")


# rev-parse's options for the common git directory and the object format, in that order.
_LAYOUT = ("rev-parse", "--path-format=absolute", "--git-common-dir", "--show-object-format")
# What ``_LAYOUT`` found, per main worktree, for this process: a repository's common
# directory and object format do not change under a running magi, and every ``Git`` of the
# same root (a run's context makes its own) is spared asking again.
_LAYOUTS: dict[Path, tuple[Path, str]] = {}


class Git:
    """One repository. ``root`` is the toplevel of its main worktree (see ``discover``)."""

    def __init__(self, repo: Path, *, hooks_dir: Path | None = None) -> None:
        self.root = Path(repo).resolve()
        self.hooks_dir = hooks_dir.resolve() if hooks_dir is not None else None
        known = _LAYOUTS.get(self.root)
        self._common: Path | None = known[0] if known else None
        self._format: str | None = known[1] if known else None

    @staticmethod
    def discover(path: Path) -> Git:
        """The repository containing ``path``, rooted at its main worktree (even from a linked)."""
        if not path.exists():
            raise RepoError(f"not a git repository: {path} (no such path)")
        probe = Git(path if path.is_dir() else path.parent)
        # The same call learns what prep's clones need (the shared store, its hash), so that
        # no clone of a wave runs a git process of its own to ask.
        bare = probe._exec([*_LAYOUT, "--is-bare-repository"], check=False)
        lines = bare.stdout.decode("utf-8", "replace").splitlines()
        if bare.returncode == 0 and lines[2:3] == ["true"]:
            raise RepoError(
                f"{path} is a bare repository (no working tree to branch from): run magi in a "
                "clone of it instead, e.g. git clone <bare> work && cd work"
            )
        res = probe._exec(["rev-parse", "--show-toplevel"], check=False)
        if res.returncode != 0:
            raise RepoError(f"not a git repository: {path} (run magi inside a clone)")
        out = probe._exec(["worktree", "list", "--porcelain", "-z"]).stdout.decode()
        first = out.split("\0")
        if len(first) > 1 and first[1] == "bare":
            raise RepoError(f"not a git repository with a main worktree (bare): {path}")
        found = Git(Path(first[0].removeprefix("worktree ")))
        if bare.returncode == 0 and len(lines) == 3:
            found._common, found._format = Path(lines[0]), lines[1] or "sha1"
            _LAYOUTS[found.root] = (found._common, found._format)
        return found

    # -- running git ------------------------------------------------------------------

    def _exec(
        self,
        args: list[str],
        *,
        cwd: Path | None = None,
        check: bool = True,
        input: bytes | None = None,
        timeout: float | None = None,
        hooks: str = _NO_HOOKS,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        where = cwd or self.root
        try:
            res = subprocess.run(
                _argv(args, hooks),
                cwd=where,
                env=_env(env),
                input=input,
                stdin=None if input is not None else subprocess.DEVNULL,
                capture_output=True,
                timeout=timeout,
                check=False,
            )
        except FileNotFoundError as e:
            # Either git is missing or cwd is; say which.
            what = f"no such directory: {where}" if not where.is_dir() else "git not found on PATH"
            raise RepoError(f"{_show(args)}: {what}") from e
        except subprocess.TimeoutExpired as e:
            raise RepoError(f"{_show(args)} timed out after {timeout}s in {where}") from e
        if check and res.returncode != 0:
            raise _failed(args, res.returncode, where, res.stderr)
        return res

    def run(
        self,
        *args: str,
        cwd: Path | None = None,
        check: bool = True,
        input: str | None = None,
        timeout: float | None = None,
    ) -> str:
        """stdout of ``git <args>``; RepoError naming the command and its stderr on failure."""
        data = input.encode() if input is not None else None
        res = self._exec(list(args), cwd=cwd, check=check, input=data, timeout=timeout)
        return res.stdout.decode("utf-8", "replace")

    def _ok(self, *args: str, cwd: Path | None = None) -> bool:
        return self._exec(list(args), cwd=cwd, check=False).returncode == 0

    # -- refs -------------------------------------------------------------------------

    def known_common_dir(self, path: Path) -> None:
        """What ``common_dir`` would find, told by a caller that knows it (``clones.git_of``)."""
        self._common = Path(path)

    def layout(self) -> None:
        """Learn ``common_dir`` and ``object_format`` in one git process, if not yet known.

        Asked before work that needs them runs on several threads at once, where each
        thread would otherwise find them unknown and run git for them itself.
        """
        if self._common is None or self._format is None:
            common, fmt = self.run(*_LAYOUT).splitlines()[:2]
            self._common, self._format = Path(common), fmt or "sha1"
            _LAYOUTS[self.root] = (self._common, self._format)

    def common_dir(self) -> Path:
        if self._common is None:
            out = self.run("rev-parse", "--path-format=absolute", "--git-common-dir")
            self._common = Path(out.strip())
        return self._common

    def object_format(self) -> str:
        """``sha1`` or ``sha256``: what a repository borrowing these objects must use."""
        if self._format is None:
            self._format = self.run("rev-parse", "--show-object-format").strip() or "sha1"
        return self._format

    def is_ancestor(self, ancestor: str, commit: str) -> bool:
        args = ["merge-base", "--is-ancestor", "--end-of-options", _rev(ancestor), _rev(commit)]
        return self._ok(*args)

    def rev_parse(self, ref: str, cwd: Path | None = None) -> str:
        args = ["rev-parse", "--verify", "--quiet", "--end-of-options", _rev(ref)]
        res = self._exec(args, cwd=cwd, check=False)
        if res.returncode != 0:
            if not self._ok("rev-parse", "--verify", "--quiet", "HEAD", cwd=cwd) and not self.run(
                "for-each-ref", "--count=1", cwd=cwd
            ):
                raise RepoError(
                    f"{self.root} has no commits yet, so there is nothing to branch from: "
                    "commit something first (git commit --allow-empty -m init will do)"
                )
            raise RepoError(f"git rev-parse --verify {ref}: unknown revision {ref!r}")
        return res.stdout.decode().strip()

    def ref_exists(self, ref: str) -> bool:
        return self._ok("rev-parse", "--verify", "--quiet", "--end-of-options", _rev(ref))

    def has_commit(self, sha: str) -> bool:
        """Whether this repository holds commit ``sha`` (fetched, or made here)."""
        return self._ok("cat-file", "-e", f"{sha}^{{commit}}")

    def current_branch(self) -> str | None:
        res = self._exec(["symbolic-ref", "--quiet", "HEAD"], check=False)
        ref = res.stdout.decode().strip()
        return ref.removeprefix("refs/heads/") if res.returncode == 0 and ref else None

    def default_base(self) -> str:
        branch = self.current_branch()
        if branch:
            return branch
        for name in ("main", "master"):
            if self.ref_exists(f"refs/heads/{name}"):
                return name
        raise RepoError(f"no base branch in {self.root}: HEAD is detached and no main or master")

    def is_dirty(self) -> bool:
        # Explicit flags: status.showUntrackedFiles in an agent-writable config must not hide
        # untracked work.
        out = self.run(
            "status", "--porcelain=v1", "-z", "--untracked-files=normal", "--ignore-submodules=none"
        )
        return bool(out)

    def branches(self, prefix: str) -> list[str]:
        # Filtered here, not by a for-each-ref pattern: patterns glob and match whole components.
        out = self.run("for-each-ref", "--format=%(refname)", "refs/heads/")
        names = [line.removeprefix("refs/heads/") for line in out.splitlines()]
        return [n for n in names if n.startswith(prefix)]

    def delete_branch(self, name: str) -> None:
        if self._ok("show-ref", "--verify", "--quiet", f"refs/heads/{name}"):
            self.run("branch", "-D", _rev(name))

    # -- worktrees --------------------------------------------------------------------

    def worktree_add(self, path: Path, *, start: str, branch: str | None = None) -> None:
        path = Path(path).resolve()
        if branch is None:
            self.run("worktree", "add", "--detach", "--end-of-options", str(path), _rev(start))
            return
        if self.ref_exists(f"refs/heads/{branch}"):
            raise RepoError(f"branch {branch} already exists; refusing to reuse it for {path}")
        # --no-track: a start on a remote-tracking branch would otherwise write
        # branch.<name>.* into the shared config, which the guard would then see as tampering.
        new = ["-b", _rev(branch), "--end-of-options", str(path), _rev(start)]
        self.run("worktree", "add", "--no-track", *new)

    def worktree_remove(self, path: Path) -> None:
        path = Path(path).resolve()
        if path.exists():
            # Twice --force: also removes a worktree an agent locked.
            self.run("worktree", "remove", "--force", "--force", str(path))
        else:
            self.prune_worktrees(path.parent)

    def prune_worktrees(self, under: Path) -> list[Path]:
        """What ``git worktree prune`` does, for the trees under ``under`` only: the
        registrations whose tree is gone. Returns the trees they named.

        Never git's own prune, which takes every registration whose tree it cannot see:
        the user's worktree on a disk not mounted now, or another magi run's tree in the
        instant its ``worktree move`` has renamed it and not yet rewritten its ``gitdir``.
        A locked registration is kept, as git keeps it.
        """
        admins = self.common_dir() / "worktrees"
        # git writes real paths; ``under`` may be named through a link (macOS's /tmp).
        roots = {Path(os.path.abspath(under)), Path(os.path.realpath(under))}
        gone: list[Path] = []
        for admin in sorted(admins.iterdir()) if admins.is_dir() else []:
            if (admin / "locked").exists():
                continue
            try:
                named = (admin / "gitdir").read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                continue  # not a registration git wrote: git's own prune may judge it
            dotgit = Path(os.path.realpath(admin / named))  # relative: to the admin dir
            mine = any(dotgit.parent.is_relative_to(r) for r in roots)
            if mine and not dotgit.exists() and not dotgit.is_symlink():
                shutil.rmtree(admin, ignore_errors=True)
                gone.append(dotgit.parent)
        return gone

    def worktrees(self) -> list[Path]:
        """Every registered worktree, the main one first (as git lists them)."""
        out = self.run("worktree", "list", "--porcelain", "-z")
        return [Path(f[len("worktree ") :]) for f in out.split("\0") if f.startswith("worktree ")]

    def enable_worktree_config(self) -> None:
        # https://git-scm.com/docs/git-worktree#_configuration_file
        res = self._exec(
            ["config", "--local", "--type=bool", "--get", "extensions.worktreeConfig"], check=False
        )
        if res.stdout.strip() != b"true":
            self.run("config", "--local", "extensions.worktreeConfig", "true")

    def install_commit_msg_hook(self, worktree: Path, hooks_dir: Path, script: str) -> None:
        """Make the agent's own commits in ``worktree`` (only) run ``script`` as commit-msg."""
        hooks_dir = Path(hooks_dir).resolve()
        hooks_dir.mkdir(parents=True, exist_ok=True)
        hook = hooks_dir / "commit-msg"
        hook.write_text(script)
        hook.chmod(0o755)
        self.enable_worktree_config()
        self.run("config", "--worktree", "core.hooksPath", str(hooks_dir), cwd=Path(worktree))

    # -- commits ----------------------------------------------------------------------

    def refresh_index(self, worktree: Path, *, index: Path, git_dir: Path) -> None:
        """``update-index --refresh`` of the index file ``index`` against ``worktree``, with
        ``git_dir`` for the repository (its config, never the worktree's own git directory's):
        the stat data of every entry whose file still matches is written anew. Bounded in
        time: it reads files a seat may be changing (a fifo put where a file was)."""
        env = {"GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(worktree)}
        env["GIT_INDEX_FILE"] = str(index)
        # Written even when no entry changed: only an index written after the second its
        # files were stamped in stops git from reading them all again.
        args = ["update-index", "-q", "--refresh", "--force-write-index"]
        self._exec(args, cwd=Path(worktree), env=env, timeout=_REFRESH_TIMEOUT_S)

    def attribute_files(self, worktree: Path, *, index: Path, git_dir: Path) -> AttributeFiles:
        """From the index file ``index``: every folder of a tracked file and each folder
        above it (the only places a ``.gitattributes`` can change how a file the index
        holds is staged), and the tracked ``.gitattributes`` files. ``git_dir``: as for
        ``refresh_index``."""
        env = {"GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(worktree)}
        env["GIT_INDEX_FILE"] = str(index)
        out = self._exec(["ls-files", "-z"], env=env, cwd=Path(worktree)).stdout
        folders: set[str] = {"."}
        tracked: list[str] = []
        for raw in out.split(b"\0"):
            path = raw.decode("utf-8", "surrogateescape")
            parent, _, name = path.rpartition("/")
            if name == ".gitattributes":
                tracked.append(path)
            while parent and parent not in folders:
                folders.add(parent)
                parent = parent.rpartition("/")[0]
        return AttributeFiles(tuple(sorted(folders)), frozenset(tracked))

    def tracked_changed(self, worktree: Path, *, index: Path, paths: Iterable[str]) -> bool:
        """Whether any of ``paths`` is modified or gone in ``worktree`` against the index
        file ``index``. A git that cannot tell says changed."""
        args = ["--literal-pathspecs", "ls-files", "-z", "-m", "-d", "--", *sorted(paths)]
        env = {"GIT_INDEX_FILE": str(index)}
        res = self._exec(args, cwd=Path(worktree), env=env, check=False)
        return res.returncode != 0 or bool(res.stdout)

    def commit_all(
        self,
        worktree: Path,
        message: str,
        *,
        objects: Path | None = None,
        index: Path | None = None,
    ) -> Made | None:
        """Commit everything in ``worktree`` under the neutral identity: the new commit (its
        parent and message beside it), or None if there was nothing to commit.

        Plumbing, not ``git commit``: no hook runs at all (the trailers magi's commit-msg hook
        would strip are stripped here), and ``commit`` would refresh the index a second time
        after ``add -A`` already did (on a 2,000-file tree, 12 ms of the 30). ``objects``: the
        object store to write into instead of the worktree's own (``clones.take_back``).
        ``index``: the index file to stage into instead of the worktree's own
        (``warm_index``).
        """
        wt = Path(worktree)
        store = {"GIT_OBJECT_DIRECTORY": str(objects)} if objects is not None else {}
        staged = {**store, "GIT_INDEX_FILE": str(index)} if index is not None else store
        # HEAD is read beside `add -A` (which moves no ref): one process off the way.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="git-head") as beside:
            head = beside.submit(
                self._exec, ["rev-parse", "HEAD", "HEAD^{tree}"], cwd=wt, check=False, env=store
            )
            self._exec(
                ["-c", f"core.excludesFile={RESCUE_IGNORE}", "add", "-A"], cwd=wt, env=staged
            )
            tree = self._exec(["write-tree"], cwd=wt, env=staged).stdout.decode().strip()
            res = head.result()
        parent, was = res.stdout.decode().split()[:2] if res.returncode == 0 else ("", "")
        if tree == was:
            return None
        ident = {"NAME": NEUTRAL_NAME, "EMAIL": NEUTRAL_EMAIL}
        env = {f"GIT_{who}_{k}": v for who in ("AUTHOR", "COMMITTER") for k, v in ident.items()}
        parents = ["-p", parent] if parent else []
        text = strip_trailers(message).rstrip("\n")
        new = (
            self._exec(
                ["commit-tree", "--no-gpg-sign", *parents, "-F", "-", tree],
                cwd=wt,
                input=(text + "\n").encode(),
                env={**env, **store},
            )
            .stdout.decode()
            .strip()
        )
        # HEAD is followed to the branch it names; the old value makes it a compare-and-swap.
        self._exec(
            ["update-ref", "-m", "magi: work left uncommitted", "HEAD", new, parent or ""],
            cwd=wt,
            env=store,
        )
        return Made(new, parent, text)

    def span_log(self, base: str, ref: str) -> Span:
        """``base..ref`` in one ``git log``: its commits oldest first with their messages,
        the head, and whether ``ref`` descends from ``base``. Either end may name an
        annotated tag: both are compared as the commits they point at.

        ``--boundary`` lists the excluded parents of the listed commits: ``base`` is among
        them exactly when it is an ancestor of a head that is not ``base`` itself. Topo
        order puts the head first whatever dates its commits claim. With nothing listed,
        the head is asked for on its own (``ref`` is ``base``, or behind it).
        """
        args = ["log", "-z", "--topo-order", "--boundary", "--no-notes", "--format=%m%H%n%B"]
        out = self.run(*args, *_span(base, ref))
        commits: list[tuple[str, str]] = []
        boundary: set[str] = set()
        for entry in out.split("\0"):
            if not entry:
                continue
            mark, _, rest = entry.partition("\n") if "\n" in entry else (entry, "", "")
            sha = mark[1:]
            if mark.startswith("-"):
                boundary.add(sha)
            else:
                commits.append((sha, rest.rstrip("\n")))
        base_sha = base if _OID.fullmatch(base) else self.rev_parse(f"{base}^{{commit}}")
        if not commits:
            head = self.rev_parse(f"{ref}^{{commit}}")
            return Span(
                head=head, commits=[], descends=head == base_sha or self.is_ancestor(base_sha, head)
            )
        return Span(head=commits[0][0], commits=commits[::-1], descends=base_sha in boundary)

    def head(self, worktree: Path) -> str:
        return self.rev_parse("HEAD", cwd=Path(worktree))

    def commit_count(self, base: str, head: str) -> int:
        out = self.run("rev-list", "--count", *_span(base, head))
        return int(out.strip())

    def commit_messages(self, base: str, head: str) -> list[str]:
        """Full messages (subject and body), oldest first."""
        out = self.run("log", "-z", "--reverse", "--no-notes", "--format=%B", *_span(base, head))
        return [m.rstrip("\n") for m in out.split("\0") if m]

    def commit_texts(self, base: str, head: str) -> tuple[list[str], list[str]]:
        """Every message of ``base..head`` (``commit_messages``) and every author's and
        committer's ``name <email>``, raw (no mailmap), each once, oldest first: one log."""
        out = self.run(
            "log",
            "-z",
            "--reverse",
            "--no-notes",
            "--format=%an <%ae>%x00%cn <%ce>%x00%B",
            *_span(base, head),
        )
        # -z ends each commit with a NUL: three fields a commit, none of which can hold one.
        fields = out.split("\0")
        messages: list[str] = []
        who: dict[str, None] = {}
        for i in range(0, len(fields) - 2, 3):
            who.update(dict.fromkeys(f for f in fields[i : i + 2] if f))
            messages.append(fields[i + 2].rstrip("\n"))
        return [m for m in messages if m], list(who)

    # -- diffs ------------------------------------------------------------------------

    def numstat(self, base: str, head: str, cwd: Path | None = None) -> list[FileStat]:
        """Per-file counts; binary files get None. Never --stat: its bars scale to the terminal."""
        return self.numstat_touched(base, head, cwd=cwd)[0]

    def numstat_touched(
        self, base: str, head: str, cwd: Path | None = None
    ) -> tuple[list[FileStat], list[str]]:
        """``numstat`` and every path touched, from one diff.

        A rename's record names both sides, and both are touched: ``git mv
        .github/workflows/ci.yml x.bak`` must not hide the first.
        """
        out = self.run(*_diff(base, head, "--numstat", "-z", "--find-renames"), cwd=cwd)
        # -z records: "A\tD\tpath\0", or for a rename "A\tD\t\0old\0new\0".
        fields = out.split("\0")
        stats: list[FileStat] = []
        touched: list[str] = []
        i = 0
        while i < len(fields) and fields[i]:
            added, deleted, path = fields[i].split("\t", 2)
            if not path:  # a rename: the old path is the next field, the new one after it
                touched.append(fields[i + 1])
                path, i = fields[i + 2], i + 2
            touched.append(path)
            counts = [None if n == "-" else int(n) for n in (added, deleted)]
            stats.append(FileStat(path=path, added=counts[0], deleted=counts[1]))
            i += 1
        return stats, sorted(set(touched))

    def removals(self, base: str, head: str) -> str:
        """The zero-context diff of files that existed at ``base`` (modified, deleted, renamed)."""
        flags = ("-U0", "--diff-filter=MDR", "--find-renames", "--src-prefix=a/", "--dst-prefix=b/")
        return self.run(*_diff(base, head, *flags))

    def patch(self, base: str, head: str, *, max_bytes: int) -> tuple[str, int]:
        """The unified diff, at most ``max_bytes`` of it (cut at a line end), and bytes dropped.

        Read in chunks so a gigabyte diff costs ``max_bytes`` of memory, not a gigabyte.
        """
        args = _diff(base, head, "--find-renames")
        kept = bytearray()
        dropped = 0
        # stderr goes to a file, so a chatty stderr cannot fill a pipe and deadlock the read.
        with (
            tempfile.TemporaryFile() as err,
            subprocess.Popen(
                _argv(args, _NO_HOOKS),
                cwd=self.root,
                env=_env(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
            ) as proc,
        ):
            stdout = cast(IO[bytes], proc.stdout)  # never None: stdout=PIPE
            while chunk := stdout.read(_CHUNK):
                take = chunk[: max(max_bytes - len(kept), 0)]
                kept += take
                dropped += len(chunk) - len(take)
            if proc.wait() != 0:
                err.seek(0)
                raise _failed(args, proc.returncode, self.root, err.read())
        if dropped and b"\n" in kept:
            cut = kept.rindex(b"\n") + 1
            dropped += len(kept) - cut
            del kept[cut:]
        return kept.decode("utf-8", "replace"), dropped
