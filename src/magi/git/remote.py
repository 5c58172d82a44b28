"""git against the repository on GitHub, with the App token kept out of URLs, argv and logs.

Every command runs in a fresh environment (nothing inherited but PATH), with hooks, system
and global config off, and gets the token only from ``GIT_ASKPASS``: a script in a private
temporary directory that prints ``$MAGI_GIT_TOKEN``, which only this git process holds. No
agent runs in the publish job, so no other process is there to read that environment.
A rejected lease raises ``LeaseRejected``: the branch moved, re-read, never retry blindly.
A push GitHub itself refused (a protected branch, a rule, a hook, an App token without the
``workflows`` permission changing ``.github/workflows/*``) raises ``PushRefused`` with
GitHub's own words: it is not a race, and re-reading would not help.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from magi.errors import ActionError, LeaseRejected, PushRefused

__all__ = ["LeaseRejected", "PushRefused", "Remote", "refusal"]

_ASKPASS = """#!/bin/sh
case "$1" in
  Username*) printf '%s\\n' x-access-token ;;
  *) printf '%s\\n' "$MAGI_GIT_TOKEN" ;;
esac
"""


_REMOTE_REJECTED = re.compile(r"\[remote rejected\]\s*\((?P<why>[^\n]*)\)")
_REMOTE_LINE = re.compile(r"^remote:\s?(?P<text>.*)$", re.M)
_WORKFLOWS = re.compile(r"without .?workflows.? permission", re.I)


def refusal(ref: str, said: str) -> ActionError:
    """What a failed ``git push --porcelain --force-with-lease`` means, from what it said."""
    m = _REMOTE_REJECTED.search(said)
    if m is not None:
        why = m.group("why").strip()
        remote = " ".join(t.strip() for t in _REMOTE_LINE.findall(said) if t.strip())
        words = f"{why}: {remote}" if remote and remote not in why else why
        fix = ""
        if _WORKFLOWS.search(said):
            fix = (
                " The push changes .github/workflows/: the App needs the `workflows: write` "
                "permission (app.yml; accept it in the installation's settings)."
            )
        return PushRefused(f"GitHub refused the push of {ref}: {words}.{fix}")
    if "stale info" in said or re.search(r"\[rejected\]", said):
        return LeaseRejected(
            f"{ref} on GitHub is not where magi last pushed it; "
            "re-read its state before pushing again"
        )
    return ActionError(f"git push {ref} failed: {said}")


class Remote:
    """The repository ``url`` (no credentials in it), reached from the checkout at ``repo``."""

    def __init__(self, repo: Path, url: str, token: str | None) -> None:
        if "@" in url.split("://", 1)[-1].split("/", 1)[0]:
            raise ActionError("the remote URL must not carry credentials")
        self.repo = repo
        self.url = url
        self._token = token

    @contextmanager
    def _env(self) -> Iterator[dict[str, str]]:
        with tempfile.TemporaryDirectory(prefix="magi-askpass-") as tmp:
            askpass = Path(tmp) / "askpass"
            askpass.write_text(_ASKPASS, encoding="utf-8")
            askpass.chmod(stat.S_IRWXU)
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": tmp,
                "LC_ALL": "C",
                "GIT_TERMINAL_PROMPT": "0",
                "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_CONFIG_GLOBAL": os.devnull,
                "GIT_ASKPASS": str(askpass),
            }
            if self._token:
                env["MAGI_GIT_TOKEN"] = self._token
            yield env

    def _git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        argv = [
            "git",
            "-c",
            f"core.hooksPath={os.devnull}",
            "-c",
            "credential.helper=",
            "-c",
            "core.askPass=",  # GIT_ASKPASS wins over it; set empty so config cannot name one
            "-c",
            "protocol.ext.allow=never",
            *args,
        ]
        with self._env() as env:
            res = subprocess.run(
                argv, cwd=self.repo, env=env, capture_output=True, text=True, check=False
            )
        if check and res.returncode != 0:
            err = self._scrub(res.stderr.strip())
            raise ActionError(f"git {args[0]} to {self.url} failed (exit {res.returncode}): {err}")
        return res

    def _scrub(self, text: str) -> str:
        return text.replace(self._token, "***") if self._token else text

    def ls_remote(self, *refs: str) -> dict[str, str]:
        """{ref: sha} for the named refs that exist on the remote."""
        out = self._git("ls-remote", "--", self.url, *refs).stdout
        pairs = (line.split("\t", 1) for line in out.splitlines() if "\t" in line)
        return {ref: sha for sha, ref in pairs}

    def fetch(self, ref: str, into: str) -> str | None:
        """Fetch ``ref`` into the local ``into``; its sha, or None when the remote lacks it."""
        if not self.ls_remote(ref):
            return None
        self._git("fetch", "--quiet", "--no-tags", self.url, f"+{ref}:{into}")
        return self._git("rev-parse", "--verify", into).stdout.strip()

    def push(self, local: str, ref: str, *, expect: str | None) -> None:
        """Push ``local`` to ``ref``, only if the remote ``ref`` is ``expect`` (None: absent)."""
        lease = f"--force-with-lease={ref}:{expect or ''}"
        res = self._git("push", "--porcelain", lease, self.url, f"{local}:{ref}", check=False)
        if res.returncode != 0:
            said = self._scrub((res.stdout + res.stderr).strip())
            why = refusal(ref, said)
            if isinstance(why, LeaseRejected):
                why = LeaseRejected(
                    f"{ref} on GitHub is not where magi last pushed it "
                    f"({(expect or 'absent')[:12]}); re-read its state before pushing again"
                )
            raise why
