"""JSON log lines for the App: one per delivery and one per action taken.

Only the fields passed in ``extra=`` under known names are written, so a token, the key, the
webhook secret or a delivery's body can reach the log only if code names it on purpose,
and no code does. Free text is the message alone.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

FIELDS = ("delivery", "repo", "event", "action", "outcome", "ms", "step", "error", "attempt")
LOGGER = "magi.app"


class JsonFormatter(logging.Formatter):
    """``{"level", "msg", <FIELDS present>}`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {"level": record.levelname.lower(), "msg": record.getMessage()}
        for name in FIELDS:
            value = getattr(record, name, None)
            if value is not None:
                line[name] = value
        return json.dumps(line, separators=(",", ":"), default=str)


def logger() -> logging.Logger:
    return logging.getLogger(LOGGER)


def configure(stream: Any = None, level: int = logging.INFO) -> None:
    """Send ``magi.app`` (and the retry layer's) records to ``stream`` as JSON, once."""
    log = logger()
    if any(isinstance(h.formatter, JsonFormatter) for h in log.handlers):
        return
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    log.addHandler(handler)
    log.setLevel(level)
    log.propagate = False
