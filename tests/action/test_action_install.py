"""action/install.sh refuses a Python older than 3.11 in one line that names the fix."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).parents[2]

OLD_PYTHON = """#!/bin/sh
# a runner's Python 3.10: answers the version check as 3.10 would
case "$2" in
  *version_info*) exit 1 ;;
  *python_version*) echo 3.10.12 ;;
esac
"""


def test_an_old_python_is_refused_in_one_line_before_pip(tmp_path: Path) -> None:
    python = tmp_path / "python3.10"
    python.write_text(OLD_PYTHON)
    python.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "MAGI_PYTHON": str(python), "RUNNER_TEMP": str(tmp_path)}
    env["GITHUB_ACTION_PATH"] = str(ROOT)
    res = subprocess.run(
        ["bash", str(ROOT / "action" / "install.sh")],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert res.returncode == 1
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert "magi needs Python >= 3.11" in lines[0]
    assert "3.10.12" in lines[0]
    assert "runner's PATH as python3" in lines[0]  # the generated workflow sets no input
    assert not (tmp_path / "magi-venv").exists()


def test_the_install_script_says_where_dependencies_come_from() -> None:
    """Not "nothing is fetched by name": pip resolves magi's dependencies from the index."""
    for doc in ("action/install.sh", "docs/action.md"):
        assert "fetched by name" not in (ROOT / doc).read_text(encoding="utf-8"), doc
