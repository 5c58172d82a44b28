"""Which magi this is: the repository and the full commit it was built from.

``magi init --github`` pins every ``uses:`` of the workflow it writes to this, so no
placeholder ever reaches a user's workflow and the action installs exactly the magi the
user runs. It is recorded in the package at build time (``setup.py`` writes
``magi/_source.json`` from the checkout being built: ``pip install
git+https://github.com/OWNER/REPO@SHA`` builds from such a checkout); an editable install
reads the checkout it lives in. A remote that is not on github.com names no repository (the
commit is still known), and a URL's credentials are never recorded.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Source", "from_checkout", "github_repository", "installed_source", "parse_source"]

_SHA = re.compile(r"^[0-9a-f]{40}$")
_REPO = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")
_GITHUB = re.compile(
    r"^(?:https://(?:[^@/]+@)?github\.com/|ssh://git@github\.com/|git@github\.com:)"
    r"(?P<repo>[A-Za-z0-9-]+/[A-Za-z0-9._-]+?)(?:\.git)?/?$"
)
RECORD = "_source.json"


@dataclass(frozen=True)
class Source:
    """``repository`` (OWNER/REPO on github.com, None when unknown) at ``commit``."""

    repository: str | None
    commit: str

    @property
    def pin(self) -> str | None:
        """``OWNER/REPO@SHA`` for a workflow's ``uses:``, when the repository is known."""
        return f"{self.repository}@{self.commit}" if self.repository else None


def github_repository(url: str) -> str | None:
    """OWNER/REPO of a github.com remote URL (https or ssh), else None."""
    m = _GITHUB.match(url.strip())
    return m["repo"] if m else None


def parse_source(text: str) -> Source:
    """``OWNER/REPO@SHA`` (a full 40-hex commit) or ValueError saying what is wrong."""
    repo, sep, sha = text.strip().partition("@")
    if not sep or not _REPO.match(repo):
        raise ValueError(f"{text!r} is not OWNER/REPO@SHA")
    if not _SHA.match(sha.lower()):
        raise ValueError(
            f"{text!r}: the commit must be a full 40-character SHA (no branch, no tag)"
        )
    return Source(repo, sha.lower())


def from_checkout(root: Path) -> Source | None:
    """The source of the git checkout at ``root`` (its HEAD and its origin), or None."""

    def git(*args: str) -> str:
        res = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
        )
        return res.stdout.strip() if res.returncode == 0 else ""

    sha = git("rev-parse", "HEAD")
    if not _SHA.match(sha):
        return None
    return Source(github_repository(git("remote", "get-url", "origin")), sha)


def installed_source() -> Source | None:
    """This magi's source: the build's record, else the checkout an editable install is."""
    here = (
        Path(__file__).resolve().parents[1]
    )  # the magi package, where the build writes its record
    record = here / RECORD
    if record.is_file():
        try:
            data = json.loads(record.read_text(encoding="utf-8"))
            return Source(data.get("repository") or None, str(data["commit"]))
        except (ValueError, KeyError, TypeError):
            return None
    top = here.parent.parent  # src/magi -> the checkout
    if (top / ".git").exists() and (top / "pyproject.toml").is_file():
        return from_checkout(top)
    return None
