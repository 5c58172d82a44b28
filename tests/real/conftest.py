"""The real-CLI tier: the agent CLIs from npm at pinned versions (``make test-real``
installs them into a cache outside /tmp and names it in ``MAGI_REAL_CLIS``), run by
magi's own adapters, jailed, against the scripted model (``magi.testing.model_server``).

Without ``MAGI_REAL_CLIS`` the tier skips; under ``MAGI_REAL_REQUIRED=1`` (the make target,
and so ``.ci/run``) a skip is a failure, so CI cannot pass by not running it.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest


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
