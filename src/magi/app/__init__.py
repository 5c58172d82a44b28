"""The magi GitHub App: webhook receiver, claims, dispatch, the merge gate, comment commands."""

from magi.app.main import ROUTER, create_app
from magi.app.settings import Settings, SettingsError, settings_from_env

__all__ = ["ROUTER", "Settings", "SettingsError", "create_app", "settings_from_env"]
