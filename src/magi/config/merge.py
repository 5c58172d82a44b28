"""Deep merge of config layers: tables merge key by key, and each array belongs to one layer.

Why arrays never merge: every array magi reads is a whole value. ``roles.implementers`` is an
ordered list of seats, ``verify.gate`` the commands to run, ``notify.command`` an argv,
``[[agents]]`` the roster. Concatenating two layers' copies produces something nobody wrote
(three implementers from a machine's two and a repository's one, or the argv
``["ntfy", "publish", "curl", "-X"]``), and letting the higher layer replace the lower one
silently hides a roster you are paying for. So an array declared in two layers is an error
that names both files; the machine states the roster and a repository overrides scalars, or
the repository states its own and the machine does not.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def dotted(parts: Iterable[str | int]) -> str:
    """A key path as a person writes it: ``graph.judges``, ``agents[1].kind``, ``vars."a.b"``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        name = part if _BARE_KEY.match(part) else json.dumps(part)
        out = f"{out}.{name}" if out else name
    return out


@dataclass(frozen=True)
class ArrayClash:
    """One array declared in two layers."""

    key: str
    first: Path
    second: Path

    def message(self) -> str:
        return (
            f"{self.key} is declared in {self.first} and {self.second}; "
            "declare an array in one layer only"
        )


@dataclass
class Merged:
    """The merged data, the file each leaf and each array came from, and the clashes found."""

    data: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, Path] = field(default_factory=dict)
    clashes: list[ArrayClash] = field(default_factory=list)


def merge_layers(layers: Sequence[tuple[Path, Mapping[str, Any]]]) -> Merged:
    """Merge ``layers`` (lowest precedence first) into one table, recording provenance."""
    merged = Merged()
    for path, doc in layers:
        _merge_table(merged, merged.data, doc, path, ())
    return merged


def _merge_table(
    merged: Merged,
    into: dict[str, Any],
    doc: Mapping[str, Any],
    path: Path,
    prefix: tuple[str, ...],
) -> None:
    for name, value in doc.items():
        parts = (*prefix, name)
        key = dotted(parts)
        current = into.get(name)
        if isinstance(value, Mapping) and isinstance(current, dict):
            _merge_table(merged, current, value, path, parts)
            continue
        if isinstance(value, list) and key in merged.sources and isinstance(current, list):
            merged.clashes.append(ArrayClash(key, merged.sources[key], path))
        if name in into:
            # A value of another shape replaces the old one whole (validation judges the
            # shape); the old value's leaves must not keep claiming their files.
            _forget(merged.sources, key)
        if isinstance(value, Mapping):
            into[name] = {}
            _merge_table(merged, into[name], value, path, parts)
        else:
            into[name] = value
            merged.sources[key] = path


def _forget(sources: dict[str, Path], key: str) -> None:
    for k in [k for k in sources if k == key or k.startswith((f"{key}.", f"{key}["))]:
        del sources[k]


def merge_plain(lower: Mapping[str, Any], higher: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge two tables without provenance, the higher winning (used for ``[vars]``).

    Clashing arrays are not reported here: the real merge of the same layers reports them.
    """
    out = dict(lower)
    for name, value in higher.items():
        current = out.get(name)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            out[name] = merge_plain(current, value)
        else:
            out[name] = value
    return out


def source_for(parts: Sequence[str | int], sources: Mapping[str, Path]) -> Path | None:
    """The file that declared the value at ``parts``, or the nearest enclosing array's file.

    A key under a table no file declared as such (``[graphh] x = 1``) falls back to the file
    of any leaf below it, so an unknown table is still reported against its file.
    """
    for end in range(len(parts), 0, -1):
        key = dotted(parts[:end])
        if key in sources:
            return sources[key]
    if parts:
        key = dotted(parts)
        for k, path in sources.items():
            if k.startswith((f"{key}.", f"{key}[")):
                return path
    return None
