"""Where an agent CLI keeps its state, and which of it is a login: pure data and filters.

A seat never shares its CLI's state with another seat (docs/jail.md, "Each seat its own
CLI state"). Each seat's jail binds a copy of its own at the places its CLI looks
(``Root``): empty at first, but for the login (``Login``), copied in from the user's state
before every turn and taken out after it, so that no instruction, hook, settings or MCP
file of the user's (or of an earlier seat's) ever reaches a seat, and no login rests on
disk in a run's folder. A ``Login`` with ``keys`` is a JSON file of which only those keys
(dotted for nested ones) are the login: the rest of it is the CLI's settings.

The facts for each built-in CLI live in its adapter (``magi.agents.<kind>.STATE``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

__all__ = [
    "RENEWABLE",
    "CliState",
    "Login",
    "Root",
    "login_part",
    "merge_login",
    "renewal",
    "resolved",
    "without_login",
]

# The values a CLI rewrites when it renews an OAuth login (claude's claudeAiOauth, codex's
# tokens and last_refresh, gemini's oauth_creds, opencode's oauth entries): a login file a
# seat's CLI rewrote is taken back only when nothing else of it changed.
RENEWABLE = frozenset(
    {
        "accessToken",
        "refreshToken",
        "expiresAt",
        "access_token",
        "refresh_token",
        "id_token",
        "expires_at",
        "expiry",
        "expiry_date",
        "expires",
        "expires_in",
        "access",
        "refresh",
        "last_refresh",
    }
)
RENEWAL_MAX_BYTES = 64 * 1024


@dataclass(frozen=True)
class Login:
    """One login file, relative to its root ("" for a root that is the file itself)."""

    path: str
    keys: tuple[str, ...] = ()  # a JSON file of which only these keys are the login


@dataclass(frozen=True)
class Root:
    """A place the CLI keeps state: "~/x" under the home, "$NAME" where a variable points
    (only when it is set), "$NAME/x" under it. ``file``: the root is one file."""

    where: str
    logins: tuple[Login, ...] = ()
    file: bool = False
    seed: bool = False  # a cache: copied once into a seat's new copy, never handed back


@dataclass(frozen=True)
class CliState:
    roots: tuple[Root, ...] = ()


def resolved(root: Root, home: str, environ: Mapping[str, str]) -> str | None:
    """The host path of ``root`` for a user whose home is ``home``; None when unset."""
    where = root.where
    if where.startswith("~/"):
        return str(PurePosixPath(home) / where[2:])
    if where.startswith("$"):
        name, _, rest = where[1:].partition("/")
        value = environ.get(name, "")
        if not value or not value.startswith("/"):
            return None
        return str(PurePosixPath(value) / rest) if rest else value
    return None


def _get(data: object, dotted: str) -> tuple[bool, object]:
    for part in dotted.split("."):
        if not isinstance(data, dict) or part not in data:
            return False, None
        data = data[part]
    return True, data


def _set(data: dict[str, object], dotted: str, value: object) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        inner = data.get(part)
        if not isinstance(inner, dict):
            inner = {}
            data[part] = inner
        data = inner
    data[last] = value


def _drop(data: dict[str, object], dotted: str) -> None:
    *parents, last = dotted.split(".")
    inner: object = data
    for part in parents:
        if not isinstance(inner, dict) or part not in inner:
            return
        inner = inner[part]
    if isinstance(inner, dict):
        inner.pop(last, None)


def _object(text: str) -> dict[str, object] | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def login_part(text: str, keys: tuple[str, ...]) -> dict[str, object]:
    """The login keys of the user's JSON file ``text``; {} when it is not a JSON object."""
    data = _object(text) or {}
    out: dict[str, object] = {}
    for key in keys:
        found, value = _get(data, key)
        if found:
            _set(out, key, value)
    return out


def merge_login(seat_text: str | None, login: dict[str, object], keys: tuple[str, ...]) -> str:
    """The seat's own JSON file with the user's login keys laid over it."""
    data = _object(seat_text or "") or {}
    for key in keys:
        _drop(data, key)
        found, value = _get(login, key)
        if found:
            _set(data, key, value)
    return json.dumps(data, indent=2)


def without_login(seat_text: str, keys: tuple[str, ...]) -> str | None:
    """The seat's JSON file with its login keys taken out; None when it is not JSON (the
    caller removes it whole then: a login is never left behind for want of parsing)."""
    data = _object(seat_text)
    if data is None:
        return None
    for key in keys:
        _drop(data, key)
    return json.dumps(data, indent=2)


def _same_but_renewed(old: object, new: object, key: str = "") -> bool:
    if key in RENEWABLE and not isinstance(old, dict | list):
        return isinstance(new, type(old)) or new is None or old is None
    if isinstance(old, dict):
        if not isinstance(new, dict) or set(old) != set(new):
            return False
        return all(_same_but_renewed(old[k], new[k], k) for k in old)
    return old == new


def renewal(sent: bytes | None, now: bytes) -> bool:
    """Whether ``now`` is the login ``sent`` renewed: both JSON objects of the same keys at
    every level, and only token and expiry values (``RENEWABLE``) changed. A seat cannot
    hand back another account, a new entry (opencode's ``wellknown``, which makes opencode
    fetch config from a URL), nor a login where the user had none."""
    if sent is None or len(now) > RENEWAL_MAX_BYTES:
        return False
    try:
        old, new = json.loads(sent), json.loads(now)
    except ValueError:
        return False
    return isinstance(old, dict) and _same_but_renewed(old, new)
