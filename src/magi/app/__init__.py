"""The magi GitHub App: webhook receiver, claims, dispatch, the merge gate, comment commands."""

from magi.app.main import ROUTER, create_app
from magi.app.settings import Settings, settings_from_env
from magi.errors import SettingsError

__all__ = ["ROUTER", "Settings", "SettingsError", "create_app", "settings_from_env"]
