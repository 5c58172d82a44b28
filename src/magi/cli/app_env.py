"""The receiver's environment file (``magi-app.env``, as ``magi app setup`` writes it).

One ``NAME=value`` a line, the value quoted as a POSIX shell reads it back (``set -a; .
magi-app.env``), ``#`` comments. Read here without a shell: nothing in it is ever run. The
file's values win over the process's environment, so the file is what the receiver is.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from magi.errors import UsageError

__all__ = ["AppKey", "app_key", "environment", "read_env_file"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def read_env_file(path: Path) -> dict[str, str]:
    """``path``'s assignments; a UsageError naming the line that is not one."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--env-file: cannot read {path}: {exc.__class__.__name__}") from None
    out: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            words = shlex.split(line, comments=True)
        except ValueError as exc:
            raise UsageError(f"{path}:{number}: {exc}") from None
        name, eq, value = (words[0] if len(words) == 1 else "").partition("=")
        if not eq or not _NAME.fullmatch(name):
            raise UsageError(f"{path}:{number}: not a NAME=value line")
        out[name] = value
    return out


def environment(env_file: Path | None) -> dict[str, str]:
    """The process's environment with ``env_file``'s values over it."""
    return {**os.environ, **(read_env_file(env_file) if env_file else {})}


@dataclass(frozen=True)
class AppKey:
    """What asking GitHub as the App takes: its id, its key (never printed), GitHub's API;
    and where the receiver says it answers."""

    app_id: str
    pem: str = field(repr=False)
    api_url: str = "https://api.github.com"
    public_url: str | None = None


def app_key(environ: Mapping[str, str]) -> AppKey:
    """The App's id and key from the receiver's variables; a UsageError naming each missing."""
    app_id = environ.get("GITHUB_APP_ID", "").strip()
    pem = environ.get("GITHUB_APP_PRIVATE_KEY", "").strip().replace("\\n", "\n")
    path = environ.get("GITHUB_APP_PRIVATE_KEY_PATH", "").strip()
    problems = [] if app_id else ["GITHUB_APP_ID is missing"]
    if path and not pem:
        try:
            pem = Path(path).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(
                f"GITHUB_APP_PRIVATE_KEY_PATH: cannot read {path}: {type(exc).__name__}"
            )
    elif not pem:
        problems.append("GITHUB_APP_PRIVATE_KEY or GITHUB_APP_PRIVATE_KEY_PATH is missing")
    if problems:
        raise UsageError(
            "; ".join(problems) + " (pass --env-file magi-app.env, the file setup wrote)"
        )
    api = environ.get("GITHUB_API_URL", "").strip() or "https://api.github.com"
    public = environ.get("MAGI_PUBLIC_URL", "").strip().rstrip("/") or None
    return AppKey(app_id, pem, api.rstrip("/"), public)
