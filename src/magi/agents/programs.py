"""What an agent's own program needs to start inside its jail: the files the jail would hide.

The jail's ``/tmp`` is private, so a CLI installed under ``/tmp`` (``npm install --prefix
/tmp/x @openai/codex`` with ``/tmp/x/node_modules/.bin`` on PATH) or a command agent's
script there (``sh /tmp/x/impl.sh``) is not there for bwrap to start: every turn failed
with ``execvp codex: No such file or directory``. These are the user's own programs, chosen
in the roster, and nothing in them is magi's or another seat's, so the seat's jail binds
them read-only:

* the PATH entry the executable was found in, and its real file's install (the nearest
  ancestor with a ``package.json`` for an npm package, whose ``bin`` script loads siblings;
  else the real file's own directory);
* an npm package's installed dependencies, found where Node's ``require`` looks (each
  ``node_modules`` from the package up): ``@openai/codex`` keeps its binary in the
  platform package beside it (``@openai/codex-linux-x64``, one of its
  ``optionalDependencies``), and without it every turn died with "Missing optional
  dependency @openai/codex-linux-x64";
* for an interpreter (``sh``, ``bash``, ``python3``, ``node``, ...), each argument that
  is an existing file: its directory (the file alone when that is ``/tmp`` itself or the
  home directory).

A path under one of the jail's ``hide`` paths stays hidden (magi's home, the user's config,
the main checkout, other seats' trees): a program kept there is the user's to move.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path

from magi.core.seats.jail import JailSpec, visible

__all__ = ["INTERPRETERS", "program_paths"]

INTERPRETERS = frozenset(
    {"sh", "bash", "dash", "zsh", "python", "python3", "node", "ruby", "perl", "deno", "bun"}
)
_PACKAGE_DEPTH = 4


def _install_of(real: Path) -> Path:
    """Where an executable's installation lives: its npm package, else its directory."""
    for parent in list(real.parents)[:_PACKAGE_DEPTH]:
        if (parent / "package.json").is_file():
            return parent
    return real.parent


# An npm package name (https://docs.npmjs.com/cli/configuring-npm/package-json#name):
# nothing in it may climb out of ``node_modules``.
_NPM_NAME = re.compile(r"(?:@[a-z0-9][\w.~-]*/)?[a-z0-9][\w.~-]*", re.IGNORECASE)


def _dependencies(package: Path) -> Iterable[Path]:
    """The installed packages ``package`` names as (optional) dependencies, each where
    Node would find it: ``<dir>/node_modules/<name>`` from the package itself upward."""
    try:
        meta = json.loads((package / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if not isinstance(meta, dict):
        return
    names: list[str] = []
    for key in ("dependencies", "optionalDependencies"):
        listed = meta.get(key)
        if isinstance(listed, dict):
            names += [n for n in listed if isinstance(n, str) and _NPM_NAME.fullmatch(n)]
    for name in dict.fromkeys(names):
        for where in (package, *package.parents):
            if where.name == "node_modules":
                continue
            found = where / "node_modules" / name
            if (found / "package.json").is_file():
                yield Path(os.path.realpath(found))
                break


def _file_or_dir(real: Path) -> Path:
    parent = real.parent
    if parent in {Path("/"), Path("/tmp"), Path.home()} or len(parent.parts) < 3:  # noqa: S108
        return real
    return parent


def _wanted(argv: Sequence[str], path: str | None) -> Iterable[Path]:
    if not argv:
        return
    found = shutil.which(argv[0], path=path)
    if found is None:
        return
    yield Path(found).parent  # the PATH entry bwrap searches inside the jail
    real = Path(os.path.realpath(found))
    install = _install_of(real)
    yield install
    if (install / "package.json").is_file():
        yield from _dependencies(install)
    if (
        Path(argv[0]).name.rstrip("0123456789.") not in INTERPRETERS
        and real.name.rstrip("0123456789.") not in INTERPRETERS
    ):
        return
    for arg in argv[1:]:
        if arg.startswith("-") or "\n" in arg:
            continue
        candidate = Path(arg)
        if candidate.is_absolute() and candidate.is_file():
            yield _file_or_dir(Path(os.path.realpath(candidate)))


def program_paths(spec: JailSpec, argv: Sequence[str], path: str | None) -> list[str]:
    """The host paths the jail must show read-only for ``argv`` to start, that it hides now
    and that are not hidden on purpose (under one of ``spec.hide``)."""
    out: list[str] = []
    for p in _wanted(argv, path):
        text = str(p)
        if visible(spec, text) != "hidden":
            continue
        if any(text == h or text.startswith(h.rstrip("/") + "/") for h in spec.hide):
            continue
        out.append(text)
    return list(dict.fromkeys(out))
