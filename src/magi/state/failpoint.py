"""Failpoints: the instants a kill test stops magi at, with a real ``kill -9``.

A kill matrix needs kills at exact instants inside a step (between two files of a clone,
between a push and a pull request), which no signal sent from outside can hit. Where
``MAGI_FAILPOINT`` names the point, magi sends itself SIGKILL there: nothing runs after
it, no ``finally``, no save, exactly as when the machine loses power. Unset (always, but in
the kill tests) it costs one dictionary lookup.
"""

from __future__ import annotations

import os
import signal

__all__ = ["ENV", "failpoint"]

ENV = "MAGI_FAILPOINT"


def failpoint(name: str) -> None:
    """Die here, at once, when ``MAGI_FAILPOINT`` is ``name``."""
    if os.environ.get(ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
