"""The real-CLI tier: the agent CLIs from npm at pinned versions (``make test-real``
installs them into a cache outside /tmp and names it in ``MAGI_REAL_CLIS``), run by
magi's own adapters, jailed, against the scripted model (``magi.testing.model_server``).

Without ``MAGI_REAL_CLIS`` the tier skips; under ``MAGI_REAL_REQUIRED=1`` (the make target,
and so ``.ci/run``) a skip is a failure, so CI cannot pass by not running it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
from real_helpers import BIN


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, None, None]:
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("MAGI_REAL_REQUIRED") == "1":
        report.outcome = "failed"
        report.longrepr = (
            f"the real-CLI tier may not skip under MAGI_REAL_REQUIRED=1: {report.longrepr}"
        )


@pytest.fixture
def place(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A home and a clone outside /tmp: codex will not run commands with its home there."""
    root = Path(BIN).resolve().parents[1] / "scratch"
    root.mkdir(exist_ok=True)
    here = Path(subprocess.check_output(["mktemp", "-d", "-p", str(root)], text=True).strip())
    yield here
    shutil.rmtree(here, ignore_errors=True)
