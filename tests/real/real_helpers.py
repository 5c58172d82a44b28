"""Shared by the real-CLI tier: where the CLIs are, and how each is pointed at the model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from magi.testing.model_scripts import GIT_ID, KEYS, pointed

__all__ = ["BIN", "GIT_ID", "KEYS", "needs_clis", "pointed"]

BIN = os.environ.get("MAGI_REAL_CLIS", "")
CLIS = ("claude", "codex", "gemini", "opencode")
needs_clis = pytest.mark.skipif(
    not BIN or not all(Path(BIN, name).exists() for name in CLIS),
    reason=f"MAGI_REAL_CLIS names no directory with {', '.join(CLIS)} (make test-real)",
)
