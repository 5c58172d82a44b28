"""Doctor's look at the repository's magi workflow: the file the App dispatches.

Read from the checkout doctor runs in (the App dispatches the default branch's, so a
checkout of another branch may differ; ``magi app check`` reads the default branch's from
GitHub). Missing is a warning only for a runner (``--runner``): a laptop using the CLI
alone needs no workflow.
"""

from __future__ import annotations

from pathlib import Path

from magi.config import source as sources
from magi.config.workflow import workflow_problems
from magi.engine.diagnose import Diagnosis

__all__ = ["check_workflow"]


def check_workflow(d: Diagnosis, *, runner: bool) -> None:
    """Add the workflow's problems to ``d``."""
    if d.repo is None:
        return
    name = d.config.github.workflow if d.config is not None else "magi.yml"
    flow = Path(d.repo["root"]) / ".github" / "workflows" / name
    if not flow.is_file():
        if runner:
            d.warn(
                f".github/workflows/{name} is not in this checkout: a label starts nothing "
                "until `magi init --github` writes it and it is committed on the default branch"
            )
        return
    try:
        text = flow.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        d.error(f".github/workflows/{name}: cannot read it ({exc.__class__.__name__})")
        return
    source = sources.installed_source()
    label = d.config.github.label if d.config is not None else None
    for severity, message in workflow_problems(text, name, source.pin if source else None, label):
        if severity == "error":
            d.error(message)
        else:
            d.warn(message)
