"""Packaging: every data file ships in the wheel, and the pinned dependencies import."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_non_python_file_in_the_package_is_declared_package_data():
    """A template left out of package-data works from a checkout and breaks once installed."""
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["magi"]
    pkg = ROOT / "src" / "magi"
    data = [
        p.relative_to(pkg).as_posix()
        for p in pkg.rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    ]
    assert data, "the package has data files (the starter template at least)"
    missing = [d for d in data if not any(fnmatch.fnmatch(d, pat) for pat in patterns)]
    assert missing == []


def test_githubkit_imports_with_the_pinned_hishel():
    """githubkit 0.16 fails to import with hishel 2.x; the pins must keep it importable."""
    from githubkit import GitHub
    from githubkit.webhooks import verify

    assert GitHub is not None
    assert verify(
        "It's a Secret to Everybody",
        b"Hello, World!",
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
    )


def test_the_cli_stays_lean_of_the_github_dependencies():
    """The CLI never imports the App's stack: a laptop install needs no githubkit or uvicorn."""
    import subprocess
    import sys

    probe = (
        "import sys, magi.cli, magi.engine, magi.demo;"
        "heavy = {'githubkit', 'fastapi', 'uvicorn', 'tenacity', 'cryptography', 'starlette'};"
        "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert out.strip() == "[]"


def test_the_suite_runs_against_the_installed_package_when_asked():
    """Under `make test-wheel` magi is imported from the built wheel, not from src/."""
    import os

    import magi

    if not os.environ.get("MAGI_TEST_WHEEL"):
        return
    assert "site-packages" in Path(magi.__file__).parts, magi.__file__


def test_the_wheel_records_the_commit_it_was_built_from():
    """`magi init --github` pins every `uses:` to the commit the installed magi was built
    from: the build writes it into the package (setup.py), and the installed magi reads
    it back. Built here from this checkout, the record is this checkout's HEAD."""
    import os
    import subprocess

    import pytest

    from magi.config.source import RECORD, installed_source

    if not os.environ.get("MAGI_TEST_WHEEL"):
        pytest.skip("runs against the built wheel (make test-wheel)")
    import magi

    assert (Path(magi.__file__).parent / RECORD).is_file(), "the build wrote no record"
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    source = installed_source()
    assert source is not None
    assert source.commit == head
