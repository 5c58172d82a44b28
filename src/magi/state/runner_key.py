"""The runner key: ``$MAGI_HOME/runner.key``, what seals a run for the runners of a pool.

32 random bytes in base64, mode 0600, the same file on every runner that serves a
repository (``magi runner-key --new`` on one, copied to the others); hidden from every
jailed seat with the rest of ``$MAGI_HOME``. ``magi.action.seal`` says what it seals and why.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from magi.errors import ActionError

__all__ = ["KEY_FILE", "RunnerKey", "load_key", "new_key"]

KEY_FILE = "runner.key"


@dataclass(frozen=True)
class RunnerKey:
    secret: bytes
    path: Path

    @property
    def fingerprint(self) -> str:
        """Which key, said without saying the key (16 hex digits of its SHA-256)."""
        return hashlib.sha256(b"magi runner key\0" + self.secret).hexdigest()[:16]


def load_key(home: Path) -> RunnerKey | None:
    """``$MAGI_HOME/runner.key``, or None when this runner has none; ActionError (naming
    the file) when it is not one: unreadable, not 32 bytes in base64, or readable by others."""
    path = home / KEY_FILE
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ActionError(f"{path}: cannot read the runner key: {e.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ActionError(f"{path}: the runner key is not a regular file")
    if info.st_mode & 0o077:
        raise ActionError(
            f"{path}: the runner key is readable by others (mode {info.st_mode & 0o777:o}); "
            f"fix: chmod 600 {path}"
        )
    try:
        secret = base64.b64decode(path.read_text(encoding="ascii").strip(), validate=True)
    except (OSError, UnicodeDecodeError, binascii.Error, ValueError):
        secret = b""
    if len(secret) != 32:
        raise ActionError(
            f"{path}: not a runner key (32 bytes in base64); make one with `magi runner-key --new`"
        )
    return RunnerKey(secret, path)


def new_key(home: Path) -> RunnerKey:
    """A new key at ``$MAGI_HOME/runner.key`` (mode 0600); refuses to replace one."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / KEY_FILE
    secret = secrets.token_bytes(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise ActionError(
            f"{path} exists: a runner key is replaced by removing it first (runs sealed with "
            "it can then be carried on by no other runner)"
        ) from None
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(base64.b64encode(secret).decode() + "\n")
    return RunnerKey(secret, path)
