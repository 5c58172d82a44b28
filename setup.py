"""Records which commit (and github.com repository) this magi is built from.

Everything else is pyproject.toml's. ``magi.config.source`` reads the record: ``magi init
--github`` pins the workflow's ``uses:`` to it. Built outside a git checkout (an sdist),
nothing is recorded and ``magi init --github`` asks for ``--source OWNER/REPO@SHA``.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

_GITHUB = re.compile(
    r"^(?:https://(?:[^@/]+@)?github\.com/|ssh://git@github\.com/|git@github\.com:)"
    r"(?P<repo>[A-Za-z0-9-]+/[A-Za-z0-9._-]+?)(?:\.git)?/?$"
)


def _git(root: Path, *args: str) -> str:
    try:
        res = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
        )
    except OSError:
        return ""
    return res.stdout.strip() if res.returncode == 0 else ""


class BuildWithSource(build_py):
    def run(self) -> None:
        super().run()
        root = Path(__file__).resolve().parent
        sha = _git(root, "rev-parse", "HEAD")
        if not re.fullmatch(r"[0-9a-f]{40}", sha):
            return
        m = _GITHUB.match(_git(root, "remote", "get-url", "origin"))
        record = {"repository": m["repo"] if m else None, "commit": sha}
        target = Path(self.build_lib) / "magi" / "_source.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(record) + "\n", encoding="utf-8")


setup(cmdclass={"build_py": BuildWithSource})
