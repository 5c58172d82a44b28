"""Which agent CLIs are on PATH, and their versions: the roster when there is no config.

Never raises for a CLI that misbehaves: a version that cannot be read is None. Each
``--version`` runs like a turn would (own process group, allowlisted environment, stdin
closed, capped output) with a short timeout, all of them in parallel.
"""

from __future__ import annotations

import os
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from magi.agents import process
from magi.agents.hookspecs import KindSpec
from magi.agents.registry import kinds

VERSION_TIMEOUT_S = 10.0
_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)?(?:[-+.][0-9A-Za-z.-]+)?")
_MAX_OUTPUT = 64_000


@dataclass(frozen=True)
class FoundCli:
    kind: str
    executable_path: str
    version: str | None


def parse_version(output: str) -> str | None:
    """The first version number in ``output`` (``codex-cli 0.171.0`` gives ``0.171.0``).

    Output with no version number gives its first line, so an odd format still shows.
    """
    match = _VERSION.search(output)
    if match:
        return match.group(0)
    first = next((ln.strip() for ln in output.splitlines() if ln.strip()), "")
    return first[:80] or None


def read_version(
    argv: list[str], *, path: str | None = None, timeout: float = VERSION_TIMEOUT_S
) -> str | None:
    """Run a ``--version`` argv; None when it fails, hangs or prints nothing."""
    env = process.allowlisted_env(os.environ)
    if path is not None:
        env["PATH"] = path  # node-based CLIs find `node` through the same PATH they came from
    res = process.run(
        argv,
        cwd=None,
        stdin=None,
        env=env,
        timeout=timeout,
        output_max_bytes=_MAX_OUTPUT,
        kill_grace=1.0,
    )
    if res.start_error or res.timed_out or res.exit_code != 0:
        return None
    return parse_version(res.stdout) or parse_version(res.stderr)


def _probe(spec: KindSpec, found: str, path: str | None, timeout: float) -> FoundCli:
    argv = [found, *spec.version_argv[1:]] if spec.version_argv else []
    try:
        version = read_version(argv, path=path, timeout=timeout) if argv else None
    except Exception:  # a broken CLI must cost doctor its version, never a traceback
        version = None
    return FoundCli(spec.name, found, version)


def find_clis(path: str | None = None, *, timeout: float = VERSION_TIMEOUT_S) -> list[FoundCli]:
    """The registered kinds whose executable is on ``path`` (default: $PATH), kind order."""
    located = []
    for spec in kinds().values():
        if spec.executable:
            found = shutil.which(spec.executable, path=path)
            if found:
                located.append((spec, found))
    if not located:
        return []
    with ThreadPoolExecutor(max_workers=len(located)) as pool:
        futures = [pool.submit(_probe, spec, found, path, timeout) for spec, found in located]
        return [f.result() for f in futures]
