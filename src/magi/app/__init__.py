"""The magi GitHub App: webhook receiver, claims, dispatch, the merge gate, comment commands.

Its names are loaded when first asked for: ``magi receive`` (``magi.app.receive_cli``) is
registered with every ``magi`` start, and must not bring the App's stack (fastapi,
githubkit, cryptography) with it (tests/project/test_packaging.py).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from magi.app.main import ROUTER, create_app
    from magi.app.settings import Settings, settings_from_env
    from magi.errors import SettingsError

__all__ = ["ROUTER", "Settings", "SettingsError", "create_app", "settings_from_env"]

_WHERE = {
    "ROUTER": "magi.app.main",
    "create_app": "magi.app.main",
    "Settings": "magi.app.settings",
    "settings_from_env": "magi.app.settings",
    "SettingsError": "magi.errors",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'magi.app' has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)
