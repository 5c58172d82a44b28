"""Where a jailed seat's connections may go: the allowlist its egress proxy enforces (pure).

A jailed seat has a network namespace of its own (only loopback); its one way out is
magi's proxy, which asks `allows` about every connection. The allowlist of a seat is the
union of its CLI kind's provider hosts (kept in the kind's adapter), the host of every base
URL its environment or argv names (a company gateway, a model on the host's loopback) and
``[sandbox] egress``. A check command (verify.e2e, verify.gate) gets ``[verify] egress``
alone: none by default.

An entry is ``host`` (ports 443 and 80), ``host:port``, ``*.domain`` (any name under
``domain``, not ``domain`` itself) or ``[v6]:port``. Names are compared lowercased, without
a trailing dot. Nothing here resolves a name: the proxy connects to the name it allowed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from magi.model.egress import Target, parse_entry

__all__ = [
    "INSIDE_SOCKET",
    "LOOPBACK",
    "Allowlist",
    "Net",
    "Target",
    "allowlist",
    "allows",
    "base_url_targets",
    "loopback_ports",
    "parse_entry",
]

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
WEB_PORTS = (443, 80)
# Environment variables whose value names a provider's base URL, by name.
_BASE_URL_NAME = re.compile(r"(BASE_URL|_API_BASE|_ENDPOINT|_HOST_URL)$")
# Variables whose value is a whole config that may hold base URLs (opencode's provider baseURL).
_CONFIG_VARS = ("OPENCODE_CONFIG_CONTENT",)
_URL = re.compile(r"(?:https?|wss?)://[^\s\"'<>,;{}()\\]+", re.IGNORECASE)
# scheme://[user@]host[:port], host a name or a bracketed IPv6 address (urllib is not core's).
_URL_PARTS = re.compile(
    r"^(?P<scheme>[a-z]+)://(?:[^@/?#]*@)?(?P<host>\[[0-9a-f:.]+\]|[^:/?#\[\]@]+)"
    r"(?::(?P<port>\d{1,5}))?(?:[/?#]|$)",
    re.IGNORECASE,
)


# Where the proxy's unix socket appears inside the jail (its private /tmp).
INSIDE_SOCKET = "/tmp/.magi-egress.sock"  # noqa: S108 - inside the jail's own /tmp


Allowlist = frozenset[Target]


@dataclass(frozen=True)
class Net:
    """A jailed process's network: its own namespace, and its way out if it has one.

    ``socket`` is the host path of the proxy's unix socket (None: no way out at all);
    ``bridge`` the argv run inside the jail ahead of the process's own (it ends ``--``);
    ``env`` the proxy variables the process is started with.
    """

    socket: str | None = None
    bridge: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()


def _url_target(url: str) -> Target | None:
    """The host and port a URL names (its scheme's port when it names none); None if none."""
    found = _URL_PARTS.match(url)
    if found is None:
        return None
    host = found["host"].lower().rstrip(".").strip("[]")
    port = int(found["port"]) if found["port"] else None
    if port is not None and not 0 < port < 65536:
        return None
    default = 443 if found["scheme"].lower() in ("https", "wss") else 80
    return Target(host, port or default)


def base_url_targets(environ: Mapping[str, str], argv: Iterable[str] = ()) -> list[Target]:
    """The host:port of every base URL the seat's environment or argv names.

    Variables named ``*BASE_URL``, ``*_API_BASE``, ``*_ENDPOINT``, ``*_HOST_URL`` and the
    config a variable carries whole (``OPENCODE_CONFIG_CONTENT``); in argv, an argument
    that says ``base_url`` (codex's ``-c openai_base_url="..."``).
    """
    texts = [v for k, v in environ.items() if _BASE_URL_NAME.search(k.upper())]
    texts += [environ[k] for k in _CONFIG_VARS if k in environ]
    texts += [a for a in argv if "base_url" in a.lower() or "baseurl" in a.lower()]
    found: list[Target] = []
    for text in texts:
        for url in _URL.findall(text):
            target = _url_target(url)
            if target is not None and target not in found:
                found.append(target)
    return found


def allowlist(
    defaults: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
    argv: Iterable[str] = (),
    extra: Iterable[str] = (),
    where: str = "[sandbox] egress",
) -> Allowlist:
    """A seat's allowlist: its kind's ``defaults``, its base URLs, and ``extra`` entries."""
    out = {parse_entry(h, "the kind's provider hosts") for h in defaults}
    out |= set(base_url_targets(environ or {}, argv))
    out |= {parse_entry(e, where) for e in extra}
    return frozenset(out)


def _name_matches(pattern: str, host: str) -> bool:
    if pattern in LOOPBACK:  # 127.0.0.1, localhost and ::1 are one host here
        return host in LOOPBACK
    if pattern.startswith("*."):
        return host.endswith(pattern[1:]) and host != pattern[2:]
    return host == pattern


def allows(allowed: Allowlist, host: str, port: int) -> bool:
    """Whether a connection to ``host:port`` is in ``allowed``."""
    name = host.lower().rstrip(".").strip("[]")
    for t in allowed:
        ports = WEB_PORTS if t.port is None else (t.port,)
        if port in ports and _name_matches(t.host, name):
            return True
    return False


def loopback_ports(allowed: Iterable[Target]) -> list[int]:
    """The ports of allowed destinations on the host's loopback: inside the seat's own
    network namespace the bridge listens on each, so a base URL of ``127.0.0.1:PORT``
    reaches the host's ``127.0.0.1:PORT`` through the proxy (and nothing else there)."""
    ports = {t.port for t in allowed if t.host in LOOPBACK and t.port is not None}
    return sorted(ports)
