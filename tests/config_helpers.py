"""Helpers shared by the config tests: writing layer files and loading them hermetically."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from magi.config.load import ResolvedConfig, load_config

FIXTURES = Path(__file__).parent / "fixtures" / "config"
SYSTEM = {"os": "linux", "arch": "x86_64", "hostname": "box"}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def load(repo: Path | None, home: Path, **kw: Any) -> ResolvedConfig:
    """Load with a fixed environment, system and user config dir, never the real ones."""
    kw.setdefault("environ", {})
    kw.setdefault("system", SYSTEM)
    return load_config(repo, user_config_dir=home, **kw)
