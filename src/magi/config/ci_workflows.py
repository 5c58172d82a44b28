"""The repository's CI workflows, by name: what magi's ``workflow_run`` trigger listens to.

Without a receiver, a ``merge`` said before the checks were green merges once they are
because the workflow's receive job runs again when a CI workflow completes, and
``workflow_run`` names the workflows it waits for by their ``name:``. ``magi init
--github`` finds them in ``.github/workflows/``: each workflow (magi's own aside) that runs
on a pull request, a push or a merge queue's group, the events whose runs put checks on a
PR. A workflow without a ``name:`` is shown by its path, which ``workflow_run`` does not
take: it is named with ``--ci``, as is any the discovery should not guess.
https://docs.github.com/en/actions/reference/workflows-and-actions/events-that-trigger-workflows#workflow_run
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CiWorkflows", "ci_workflows"]

# The events whose runs report checks on a pull request's head (or a merge queue's group).
_CHECKS_ON_PRS = {"pull_request", "pull_request_target", "push", "merge_group"}


@dataclass
class CiWorkflows:
    """The CI workflows' names, and the files passed over with why (said by init)."""

    names: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _events(on: Any) -> set[str]:
    if isinstance(on, str):
        return {on}
    if isinstance(on, list):
        return {str(e) for e in on}
    if isinstance(on, dict):
        return {str(e) for e in on}
    return set()


def ci_workflows(root: Path, own: str = "magi.yml") -> CiWorkflows:
    """The named workflows of ``root/.github/workflows`` that put checks on pull requests,
    in file order; ``own`` (magi's workflow) is never one."""
    import yaml

    found = CiWorkflows()
    folder = root / ".github" / "workflows"
    if not folder.is_dir():
        return found
    files = sorted(p for p in folder.iterdir() if p.suffix in (".yml", ".yaml"))
    for path in files:
        if path.name == own:
            continue
        where = f".github/workflows/{path.name}"
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            found.skipped.append(f"{where}: not read ({type(exc).__name__})")
            continue
        if not isinstance(data, dict):
            found.skipped.append(f"{where}: not a workflow")
            continue
        # YAML 1.1 reads a bare `on` key as the boolean true.
        events = _events(data.get("on", data.get(True)))
        if not events & _CHECKS_ON_PRS:
            continue
        name = data.get("name")
        if not isinstance(name, str) or not name.strip():
            found.skipped.append(f"{where}: it has no name: (name it with --ci NAME)")
            continue
        if name not in found.names:
            found.names.append(name)
    return found
