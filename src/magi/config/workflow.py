"""The workflow ``magi init --github`` writes: magi's template, every ``uses:`` pinned.

The template (``magi/templates/workflow.yml``, which is also ``workflows/magi.yml`` in magi's
tree) names ``MAGI_SOURCE/magi@000...0`` where the action is used: no repository can have
that name (a GitHub owner has no ``_``), so an unrendered copy fails loudly instead of
running somebody else's code. Rendering replaces each with ``OWNER/REPO@SHA`` and says so
in the header.
"""

from __future__ import annotations

import re
from importlib.resources import files

from magi.source import Source

__all__ = ["PLACEHOLDER", "render_workflow", "template"]

PLACEHOLDER = "MAGI_SOURCE/magi@" + "0" * 40
_PIN_LINES = re.compile(r"^# PIN: .*\n", re.M)


def template() -> str:
    """The workflow as magi ships it."""
    return files("magi").joinpath("templates/workflow.yml").read_text(encoding="utf-8")


def render_workflow(source: Source) -> str:
    """The template with every ``uses:`` of the magi action pinned to ``source``."""
    pin = source.pin
    if pin is None:
        raise ValueError("the source names no repository: pass --source OWNER/REPO@SHA")
    text = template()
    header = (
        f"# Written by `magi init --github`: every `uses:` of magi's action below is pinned to\n"
        f"# {pin} (the magi that wrote it). To move to another magi, run it again.\n"
    )
    text = _PIN_LINES.sub("", text, count=0)
    text = text.replace("\nname: magi\n", "\n" + header + "name: magi\n", 1)
    return text.replace(PLACEHOLDER, pin)
