"""``magi init --github --push``: magi's files committed and pushed, and its label made.

What a person would otherwise type after ``magi init --github``: ``git add`` and ``git
commit`` of magi's two files alone (``.magi/config.toml`` and the workflow; anything else
staged stays staged and out of the commit), ``git push`` of the branch to ``origin`` (refused
when the branch has commits of its own that origin lacks: they would go with it), and
the ``[github] label`` created on the repository, which the label step needs (GitHub's
issue page offers only labels that exist). The label is made with the GitHub CLI (``gh
label create``), with whatever login it has (``gh auth login``, or ``GH_TOKEN`` /
``GITHUB_TOKEN`` in the environment); magi never reads the token. A label that exists is
kept as it is. Each part that cannot be done is said with the manual step in its place.
https://cli.github.com/manual/gh_label_create
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from magi.config.source import github_repository
from magi.errors import UsageError

__all__ = ["LABEL_COLOR", "create_label", "push_files"]

LABEL_COLOR = "5319e7"
_DESCRIPTION = "magi: hold an election between coding agents on this issue"
_MESSAGE = "magi: its config and workflow (magi init --github)"


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
    )


def _said(done: subprocess.CompletedProcess[str]) -> str:
    lines = (done.stderr or done.stdout or "").strip().splitlines()
    return lines[-1] if lines else f"exit {done.returncode}"


def push_files(root: Path, files: list[str]) -> list[str]:
    """Commit ``files`` (only them) on the current branch and push it to ``origin``; the
    lines to say. A UsageError, naming the command to run by hand, when git refuses."""
    branch = _git(root, "symbolic-ref", "--quiet", "--short", "HEAD").stdout.strip()
    if not branch:
        raise UsageError("--push: HEAD is detached; check out the default branch and run it again")
    _refuse_unpushed(root, branch)
    added = _git(root, "add", "--", *files)
    if added.returncode != 0:
        raise UsageError(f"--push: git add failed: {_said(added)}")
    out = []
    if _git(root, "diff", "--cached", "--quiet", "--", *files).returncode == 0:
        out.append(f"{' and '.join(files)}: already committed as written")
    else:
        made = _git(root, "commit", "-q", "-m", _MESSAGE, "--only", "--", *files)
        if made.returncode != 0:
            raise UsageError(
                f"--push: git commit failed: {_said(made)}; commit {' '.join(files)} yourself"
            )
        out.append(f"committed {' and '.join(files)} on {branch}")
    pushed = _git(root, "push", "-q", "origin", f"HEAD:refs/heads/{branch}")
    if pushed.returncode != 0:
        raise UsageError(
            f"--push: git push origin {branch} failed: {_said(pushed)}; push it yourself "
            "(the workflow runs from the default branch)"
        )
    out.append(f"pushed {branch} to origin")
    default = _git(root, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD")
    wanted = default.stdout.strip().removeprefix("origin/")
    if wanted and wanted != branch:
        out.append(
            f"note: {branch} is not origin's default branch ({wanted}): the workflow runs "
            "only once it is there (workflow_dispatch and the label fire from it alone)"
        )
    return out


def _refuse_unpushed(root: Path, branch: str) -> None:
    """A UsageError when HEAD has commits origin does not have, other than magi's own
    (a push that failed before): ``--push`` sends the whole branch, and they would go too."""
    listed = _git(root, "log", "--format=%h %s", "HEAD", "--not", "--remotes=origin")
    if listed.returncode != 0:
        raise UsageError(f"--push: git could not list what origin lacks: {_said(listed)}")
    theirs = [line for line in listed.stdout.splitlines() if line.split(" ", 1)[1:] != [_MESSAGE]]
    if theirs:
        shown = "; ".join(theirs[:3]) + (f"; and {len(theirs) - 3} more" if len(theirs) > 3 else "")
        raise UsageError(
            f"--push: {branch} has {len(theirs)} commit(s) origin does not have ({shown}); "
            "--push would send them too. Push them (or move them to another branch) first, "
            "or commit and push magi's two files yourself"
        )


def origin_repository(root: Path) -> str | None:
    """OWNER/REPO of ``origin`` on github.com, else None."""
    url = _git(root, "remote", "get-url", "origin").stdout.strip()
    return github_repository(url) if url else None


def create_label(repo: str | None, label: str, run: Callable[..., Any] = subprocess.run) -> str:
    """Make ``label`` on ``repo`` with gh (one that exists is kept); the line to say."""
    manual = f"create the label `{label}` yourself (the repository's Issues > Labels)"
    if repo is None:
        return f"origin is not a github.com repository: {manual}"
    gh = shutil.which("gh")
    if gh is None:
        return f"the GitHub CLI (gh) is not on PATH: {manual}"
    # `--` ends the flags (gh's cobra/pflag parsing): a label starting with `-` is the name,
    # never a flag. https://github.com/spf13/cobra/commit/c439c4fa093711d42e1b01acb1235b52004753c1
    argv = [gh, "label", "create", "--repo", repo]
    argv += ["--color", LABEL_COLOR, "--description", _DESCRIPTION, "--", label]
    try:
        done = run(argv, capture_output=True, text=True, check=False, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`gh label create` did not run ({exc}): {manual}"
    if done.returncode == 0:
        return f"created the label `{label}` on {repo}"
    said = (done.stderr or done.stdout or "").strip()
    if "already exists" in said:
        return f"the label `{label}` is on {repo} already"
    first = said.splitlines()[0] if said else f"exit {done.returncode}"
    return f"`gh label create --repo {repo} -- {label}` failed ({first}): {manual}"
