"""One egress allowlist entry: ``host`` (the web ports), ``host:port``, ``*.domain``, ``[v6]:port``.

Parsed where the config is validated (``[sandbox] egress``, ``[verify] egress``) and where
the allowlist is made (``magi.core.seats.egress``). Names are lowercased, without a trailing dot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Target", "parse_entry"]

_HOST = re.compile(r"^(\*\.)?[a-z0-9]([a-z0-9_.-]*[a-z0-9])?$")


@dataclass(frozen=True, order=True)
class Target:
    """One allowed destination: ``port`` None means the web ports (443 and 80)."""

    host: str
    port: int | None = None

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port is None else f"{host}:{self.port}"


def _port(text: str, entry: str, where: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"{where}: {entry!r} has no valid port (1-65535) after ':'")
    return int(text)


def parse_entry(entry: str, where: str = "egress") -> Target:
    """``host``, ``host:port``, ``*.domain``, ``[v6]:port``; ValueError naming ``where``."""
    text = entry.strip().lower().rstrip(".")
    if "://" in text:
        raise ValueError(f"{where}: {entry!r} is a URL; give host or host:port")
    port: int | None = None
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        if rest:
            if not rest.startswith(":"):
                raise ValueError(f"{where}: {entry!r} is not [address]:port")
            port = _port(rest[1:], entry, where)
        if not host or not re.fullmatch(r"[0-9a-f:.]+", host):
            raise ValueError(f"{where}: {entry!r} is not an IPv6 address in brackets")
        return Target(host, port)
    host, sep, rest = text.partition(":")
    if sep:
        port = _port(rest, entry, where)
    if not _HOST.match(host) or ".." in host:
        raise ValueError(f"{where}: {entry!r} is not a host name or address")
    return Target(host, port)
