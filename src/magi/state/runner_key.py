"""The runner key: ``$MAGI_HOME/runner.key``, what seals a run for the runners of a pool.

32 random bytes in base64, mode 0600, the same file on every runner that serves a
repository (``magi runner-key --new`` on one, copied to the others); hidden from every
jailed seat with the rest of ``$MAGI_HOME``. ``magi.action.seal`` says what it seals and why.

The panel key is derived from it (HKDF-SHA256, one way): it seals what a judge's seat job
on another runner needs (``magi.report.before_tally.panel_copy``: the candidates by label,
no author) and what it answers. A pool runner derives it from its runner key; a runner
that only seats judges holds ``$MAGI_HOME/panel.key`` alone (``magi runner-key --panel``
writes it), so it can open the panels it is sent and never a sealed run.
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

from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from magi.errors import ActionError

__all__ = ["KEY_FILE", "PANEL_FILE", "RunnerKey", "load_key", "new_key", "panel_key", "write_panel"]

KEY_FILE = "runner.key"
PANEL_FILE = "panel.key"
_PANEL_INFO = b"magi panel key 1"


@dataclass(frozen=True)
class RunnerKey:
    secret: bytes
    path: Path
    what: str = "runner key"  # or "panel key", as the messages name it

    @property
    def fingerprint(self) -> str:
        """Which key, said without saying the key (16 hex digits of its SHA-256)."""
        return hashlib.sha256(b"magi runner key\0" + self.secret).hexdigest()[:16]


def load_key(home: Path) -> RunnerKey | None:
    """``$MAGI_HOME/runner.key``, or None when this runner has none; ActionError (naming
    the file) when it is not one: unreadable, not 32 bytes in base64, or readable by others."""
    return _read(home / KEY_FILE, "runner key", "`magi runner-key --new`")


def _read(path: Path, what: str, make: str) -> RunnerKey | None:
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ActionError(f"{path}: cannot read the {what}: {e.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ActionError(f"{path}: the {what} is not a regular file")
    if info.st_mode & 0o077:
        raise ActionError(
            f"{path}: the {what} is readable by others (mode {info.st_mode & 0o777:o}); "
            f"fix: chmod 600 {path}"
        )
    try:
        secret = base64.b64decode(path.read_text(encoding="ascii").strip(), validate=True)
    except (OSError, UnicodeDecodeError, binascii.Error, ValueError):
        secret = b""
    if len(secret) != 32:
        raise ActionError(f"{path}: not a {what} (32 bytes in base64); make one with {make}")
    return RunnerKey(secret, path, what)


def _derived(key: RunnerKey) -> RunnerKey:
    hkdf = HKDF(algorithm=SHA256(), length=32, salt=None, info=_PANEL_INFO)
    return RunnerKey(hkdf.derive(key.secret), key.path, "panel key")


def panel_key(home: Path) -> RunnerKey | None:
    """The panel key: derived from ``runner.key`` on a runner of the pool, else read from
    ``panel.key`` (a runner that only seats judges); None when neither is here. A runner
    holding both whose ``panel.key`` is not its runner key's is refused, naming both."""
    runner = load_key(home)
    own = _read(home / PANEL_FILE, "panel key", "`magi runner-key --panel`")
    if runner is None:
        return own
    derived = _derived(runner)
    if own is not None and own.secret != derived.secret:
        raise ActionError(
            f"{own.path} is not the panel key of this runner's runner key ({runner.path}, "
            f"key {runner.fingerprint}): a runner of the pool needs no panel.key; remove it"
        )
    return derived


def write_panel(home: Path, to: Path) -> RunnerKey:
    """The pool's panel key, written to ``to`` (mode 0600; refused when ``to`` exists), to
    be a judges' runner's ``$MAGI_HOME/panel.key``; ActionError without a runner key here."""
    runner = load_key(home)
    if runner is None:
        raise ActionError(
            f"no runner key at {home / KEY_FILE}: the panel key is derived from the pool's "
            "runner key; run this on a runner of the pool"
        )
    derived = _derived(runner)
    try:
        fd = os.open(to, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise ActionError(f"{to} exists: the panel key is written only where nothing is") from None
    except OSError as e:
        raise ActionError(f"{to}: cannot write the panel key: {e.strerror}") from None
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(base64.b64encode(derived.secret).decode() + "\n")
    return RunnerKey(derived.secret, to, "panel key")


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
