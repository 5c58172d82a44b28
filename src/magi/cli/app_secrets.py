"""``magi app setup --repo OWNER/REPO``: the workflow's two secrets, set with the GitHub CLI.

The values go to ``gh secret set NAME --repo OWNER/REPO`` on its standard input, never in
an argument (another user's ``ps`` reads those) nor in a file of magi's beyond the two
setup wrote; gh encrypts each with the repository's public key, with your own login. A
``gh`` that is missing or refuses is said, with the manual step in its place.
https://cli.github.com/manual/gh_secret_set
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["set_secrets"]


def set_secrets(
    repo: str,
    values: Mapping[str, str],
    run: Callable[..., Any] = subprocess.run,
) -> str | None:
    """Set each of ``values`` as a secret of ``repo``; None when all were, else why not."""
    gh = shutil.which("gh")
    if gh is None:
        return "the GitHub CLI (gh) is not on PATH"
    for name, value in values.items():
        try:
            done = run(
                [gh, "secret", "set", name, "--repo", repo],
                input=value,
                text=True,
                capture_output=True,
                check=False,
                timeout=120,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"`gh secret set {name} --repo {repo}` did not run: {exc}"
        if done.returncode != 0:
            said = (done.stderr or done.stdout or "").strip().splitlines()
            why = said[0] if said else f"exit {done.returncode}"
            return f"`gh secret set {name} --repo {repo}` failed: {why}"
    return None
