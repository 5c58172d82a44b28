"""The committed JSON-Schema snapshot of ``Run``, and the command that regenerates it.

``tests/snapshots/run.schema.json`` is ``Run.model_json_schema(by_alias=True)``, pretty-printed
with sorted keys. A test compares it with the live model, so no field of ``run.json`` can
change without a reviewer seeing the snapshot change in the same diff. Regenerate with::

    python -m magi.state.snapshot [REPO_ROOT]     # default: the nearest dir with pyproject.toml
    python -m magi.state.snapshot --check [REPO_ROOT]
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from magi.model.run import SCHEMA, Run

__all__ = ["DRIFT_HINT", "SNAPSHOT", "check", "find_root", "render", "write"]

SNAPSHOT = Path("tests", "snapshots", "run.schema.json")  # relative to the repo root

DRIFT_HINT = (
    "the Run model no longer matches tests/snapshots/run.schema.json. If a field was added,"
    " removed, or changed meaning, bump SCHEMA in magi/model/run.py (now {schema}) and add a"
    " migration in magi/state/migrations.py (or document why an old record reads correctly"
    " by default); then regenerate the snapshot with `python -m magi.state.snapshot`."
)


def render() -> str:
    """The snapshot's exact text for the model as it is now."""
    schema = Run.model_json_schema(by_alias=True)
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def find_root(start: Path) -> Path:
    """The nearest directory at or above ``start`` that holds a ``pyproject.toml``."""
    for d in (start, *start.parents):
        if (d / "pyproject.toml").is_file():
            return d
    raise FileNotFoundError(f"no pyproject.toml at or above {start}")


def write(root: Path) -> Path:
    """Regenerate the snapshot under ``root``; return its path."""
    path = root / SNAPSHOT
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(), encoding="utf-8", newline="\n")
    return path


def check(root: Path) -> str | None:
    """``None`` when the snapshot under ``root`` matches the model, else why it does not."""
    path = root / SNAPSHOT
    try:
        committed = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return f"{path} is missing; generate it with `python -m magi.state.snapshot`."
    if committed == render():
        return None
    return DRIFT_HINT.format(schema=SCHEMA)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    checking = "--check" in args
    rest = [a for a in args if a != "--check"]
    if len(rest) > 1 or any(a.startswith("-") for a in rest):
        print("usage: python -m magi.state.snapshot [--check] [REPO_ROOT]", file=sys.stderr)
        return 2
    root = Path(rest[0]) if rest else find_root(Path.cwd())
    if checking:
        problem = check(root)
        if problem:
            print(problem, file=sys.stderr)
            return 1
        return 0
    print(write(root))
    return 0


if __name__ == "__main__":
    sys.exit(main())
