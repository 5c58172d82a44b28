"""magi.core and magi.model stay pure: no processes, sockets, threads, filesystem, clocks or
outer magi."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import magi.core
import magi.model

CORE = Path(magi.core.__file__).parent
MODEL = Path(magi.model.__file__).parent

# Anything that reaches outside the process, blocks, or reads the environment. `os` goes
# whole, not just os.system: core has no business with the filesystem or the environment.
FORBIDDEN = frozenset(
    {
        "asyncio",
        "concurrent",
        "git",
        "githubkit",
        "http",
        "httpx",
        "importlib",
        "multiprocessing",
        "os",
        "pty",
        "requests",
        "select",
        "selectors",
        "shutil",
        "signal",
        "socket",
        "ssl",
        "subprocess",
        "threading",
        "time",
        "urllib",
    }
)
# The parts of magi that are themselves pure data or pure code: the data floor every layer
# speaks (``magi.model``) and the error tree.
ALLOWED_MAGI = ("magi.core", "magi.model", "magi.errors")
# Reading the clock is a side input: seeds and clocks are passed in.
CLOCK_CALLS = frozenset({"now", "utcnow", "today"})


def _allowed_magi(dotted: str) -> bool:
    return any(dotted == p or dotted.startswith(p + ".") for p in ALLOWED_MAGI)


def violations(source: str, package: str = "magi.core") -> list[str]:
    """What in ``source`` breaks core's purity, one line per offence."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against the package
                parent = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{parent}.{base}" if base else parent
            # Inside magi, "from magi.config import model" imports the module named last.
            inside = base == "magi" or base.startswith("magi.")
            names = [f"{base}.{alias.name}" for alias in node.names] if inside else [base]
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id == "__import__":
                found.append("dynamic import via __import__")
            if (
                isinstance(func, ast.Attribute)
                and func.attr in CLOCK_CALLS
                and isinstance(func.value, ast.Name)
                and func.value.id in {"datetime", "date"}
            ):
                found.append(f"clock read: {func.value.id}.{func.attr}()")
        for name in names:
            top = name.split(".")[0]
            if top in FORBIDDEN:
                found.append(f"imports {name}")
            elif top == "magi" and not _allowed_magi(name):
                found.append(f"imports {name} from outside the pure core")
    return found


def core_modules() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def model_modules() -> list[Path]:
    return sorted(MODEL.rglob("*.py"))


def test_core_has_modules() -> None:
    """The scan really looks at files (an empty glob would pass anything)."""
    names = {p.name for p in core_modules()}
    assert {"blind.py", "tally.py", "sanitize.py", "seating.py", "prompts.py"} <= names


@pytest.mark.parametrize("path", core_modules(), ids=lambda p: p.name)
def test_core_module_is_pure(path: Path) -> None:
    """Every module under magi/core imports only pure code."""
    assert violations(path.read_text(encoding="utf-8")) == []


def test_model_has_modules() -> None:
    names = {p.name for p in model_modules()}
    assert {"config.py", "run.py", "review.py", "council.py", "landing.py"} <= names


@pytest.mark.parametrize("path", model_modules(), ids=lambda p: p.name)
def test_model_module_is_pure_data(path: Path) -> None:
    """The data floor imports nothing of magi's but itself and the error tree."""
    found = violations(path.read_text(encoding="utf-8"), package="magi.model")
    found += [
        line
        for line in _magi_imports(path.read_text(encoding="utf-8"))
        if not line.startswith(("magi.model", "magi.errors"))
    ]
    assert found == []


def _magi_imports(source: str) -> list[str]:
    out: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("magi"):
            out.append(node.module or "")
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names if a.name.startswith("magi")]
    return out


@pytest.mark.parametrize(
    ("source", "offence"),
    [
        ("import subprocess", "imports subprocess"),
        ("import os.path", "imports os.path"),
        ("from os import system", "imports os"),
        ("from asyncio import run", "imports asyncio"),
        ("import threading as t", "imports threading"),
        ("from magi.graph import run", "imports magi.graph.run from outside the pure core"),
        ("import magi.config", "imports magi.config from outside the pure core"),
        ("from ..graph import nodes", "imports magi.graph.nodes from outside the pure core"),
        ("__import__('socket')", "dynamic import via __import__"),
        ("from datetime import datetime\nx = datetime.now()", "clock read: datetime.now()"),
    ],
)
def test_the_checker_catches_impurity(source: str, offence: str) -> None:
    """The checker flags each kind of impurity, so a clean scan means something."""
    assert offence in violations(source)


@pytest.mark.parametrize(
    "source",
    [
        "import re, random, unicodedata",
        "from magi.model.config import Config",
        "from magi.model.run import Tally",
        "from magi.errors import ConfigError",
        "from magi.core.compete.blind import LABELS",
        "from .blind import LABELS",
        "from magi.model import config",
    ],
)
def test_the_checker_allows_pure_imports(source: str) -> None:
    """Standard pure modules and the allowed parts of magi pass."""
    assert violations(source) == []
