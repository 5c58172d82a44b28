"""Refusing a checkout whose git config hands a credential to every worktree (and agent).

Candidate worktrees share the repository's config, so a token that ``actions/checkout``
persisted (``http.<url>.extraheader``), or one written into a remote URL, is readable by
every agent magi seats. compete refuses to start in such a checkout and says the fix.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from magi.errors import CredentialsInCheckout

__all__ = ["credential_problems", "refuse_credentials"]

# user:password@ or token@ in an http(s) URL; ssh's git@host is a user name, not a secret.
_URL_SECRET = re.compile(r"^[a-z][a-z0-9+.-]*://(?P<userinfo>[^/@\s]+)@", re.IGNORECASE)
_TOKENISH = re.compile(r"gh[pousr]_|github_pat_|x-access-token|x-oauth", re.IGNORECASE)

FIX = (
    "check out with `actions/checkout` and `persist-credentials: false`, or remove it here: "
    "`git config --local --unset-all http.https://github.com/.extraheader` and "
    "`git remote set-url origin https://github.com/OWNER/REPO.git`"
)


def _config_lines(repo: Path) -> list[tuple[str, str, str]]:
    """(origin, key, value) of every config entry git would read here, system to local."""
    res = subprocess.run(
        ["git", "config", "--show-origin", "--null", "--list", "--includes"],
        cwd=repo,
        capture_output=True,
        check=False,
        env={"PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(Path.home()), "LC_ALL": "C"},
    )
    out: list[tuple[str, str, str]] = []
    fields = res.stdout.decode("utf-8", "replace").split("\0")
    # --show-origin --null: origin NUL key NEWLINE value NUL, repeated.
    for origin, entry in zip(fields[::2], fields[1::2], strict=False):
        key, _, value = entry.partition("\n")
        out.append((origin, key.lower(), value))
    return out


def _secret_in_url(url: str) -> bool:
    m = _URL_SECRET.match(url)
    if not m:
        return False
    info = m.group("userinfo")
    return ":" in info or bool(_TOKENISH.search(info)) or len(info) >= 30


def credential_problems(repo: Path) -> list[str]:
    """Each config entry that carries a credential, named by where it is (never its value)."""
    problems: list[str] = []
    for origin, key, value in _config_lines(repo):
        where = origin.removeprefix("file:")
        if key.startswith("http.") and key.endswith(".extraheader"):
            problems.append(f"{key} in {where} (an Authorization header: a token)")
        elif key.startswith("remote.") and key.endswith((".url", ".pushurl")):
            if _secret_in_url(value):
                problems.append(f"{key} in {where} has credentials in its URL")
        elif key.startswith("url.") and key.endswith((".insteadof", ".pushinsteadof")):
            target = key.removeprefix("url.").rsplit(".", 1)[0]
            if _secret_in_url(target):
                problems.append(f"{key} in {where} rewrites URLs to one with credentials")
    return problems


def refuse_credentials(repo: Path) -> None:
    """Raise, with the fix, when the checkout at ``repo`` carries a credential."""
    problems = credential_problems(repo)
    if problems:
        lines = "\n".join(f"  {p}" for p in problems)
        raise CredentialsInCheckout(
            "this checkout's git config holds a credential that every agent could read:\n"
            f"{lines}\nfix: {FIX}"
        )
