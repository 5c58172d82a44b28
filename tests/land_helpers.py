"""Set-up for landing's runner-side tests: an origin bare repo, a magi PR branch, the fake."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from github_helpers import SEAL
from magi.action.env import ActionEnv
from magi.git.remote import Remote
from magi.git.repo import Git
from magi.github.models import Repo
from magi.testing.github import FakeGitHub

REPO = Repo(owner="octo", name="widgets")
PR = 9
BRANCH = "magi/r1/A"
ENV = ActionEnv(repo=REPO, app_login="magi-app[bot]", marker_seal=SEAL)


def sh(cwd: Path, *args: str) -> str:
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    return subprocess.run(
        ["git", *ident, *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout.strip()


def commit(cwd: Path, path: str, text: str, message: str) -> str:
    (cwd / path).write_text(text)
    sh(cwd, "add", path)
    sh(cwd, "commit", "-qm", message)
    return sh(cwd, "rev-parse", "HEAD")


@dataclass
class Scene:
    tmp: Path
    origin: Path
    dev: Path  # a person's clone, used to move main and the branch
    checkout: Path  # the job's checkout
    github: FakeGitHub

    @property
    def git(self) -> Git:
        return Git(self.checkout)

    @property
    def remote(self) -> Remote:
        return Remote(self.checkout, str(self.origin), None)

    def remote_sha(self, ref: str) -> str:
        return sh(self.origin, "rev-parse", ref)

    def move_main(self, path: str, text: str) -> str:
        sh(self.dev, "checkout", "-q", "main")
        sha = commit(self.dev, path, text, f"main: {path}")
        sh(self.dev, "push", "-q", "origin", "main")
        return sha


def scene(tmp: Path) -> Scene:
    """origin with main (a.txt, b.txt) and the PR branch changing a.txt; a fake PR on it."""
    origin = tmp / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    dev = tmp / "dev"
    subprocess.run(["git", "clone", "-q", str(origin), str(dev)], check=True, capture_output=True)
    sh(dev, "checkout", "-q", "-b", "main")
    commit(dev, "a.txt", "one\ntwo\nthree\n", "base a")
    base = commit(dev, "b.txt", "bee\n", "base b")
    sh(dev, "push", "-q", "origin", "main")
    sh(dev, "checkout", "-q", "-b", BRANCH)
    head = commit(dev, "a.txt", "one\nTWO\nthree\n", "the fix")
    sh(dev, "push", "-q", "origin", BRANCH)
    checkout = tmp / "job"
    subprocess.run(
        ["git", "clone", "-q", str(origin), str(checkout)], check=True, capture_output=True
    )
    gh = FakeGitHub()
    gh.world(REPO).refs["heads/main"] = base
    body = "Closes #1\n" + SEAL.marker("pr", issue=1, run=BRANCH.split("/")[1])
    gh.add_pull(REPO, PR, BRANCH, head, title="The fix", body=body)
    return Scene(tmp, origin, dev, checkout, gh)
