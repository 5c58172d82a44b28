"""Reading workflows/magi.yml as text: its jobs, their steps' shell (no YAML library needed)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = (ROOT / "workflows" / "magi.yml").read_text()


def jobs(text: str = WORKFLOW) -> dict[str, str]:
    """Each job's block of the workflow, by job id."""
    body = text.split("\njobs:\n", 1)[1]
    parts = re.split(r"^  ([a-z-]+):\n", body, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def run_blocks(text: str) -> list[str]:
    """The shell of every ``run:`` step (inline or block scalar), its indentation kept."""
    blocks: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)(?:- )?run: ?(.*)$", line)
        if not m:
            continue
        indent, rest = len(m.group(1)), m.group(2)
        if rest.strip() not in ("|", ">", "|-", ">-"):
            blocks.append(rest)
            continue
        block = []
        for nxt in lines[i + 1 :]:
            if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                break
            block.append(nxt)
        blocks.append("\n".join(block))
    return blocks


def step_script(job: str, name: str) -> str:
    """The shell of the step called ``name`` in ``job``, as bash would be given it."""
    block = jobs()[job]
    step = block[block.index(f"- name: {name}\n") :]
    script = run_blocks(step)[0]
    lines = script.splitlines()
    indent = min(len(ln) - len(ln.lstrip()) for ln in lines if ln.strip())
    return "\n".join(ln[indent:] for ln in lines)
