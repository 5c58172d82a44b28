"""Running ``[notify] command``: out of band, never in the way (seed 000).

The argv comes from ``magi.core.person.notify``; the command runs with no shell, no stdin, a short
timeout, and an environment of a few allowed names (``_KEPT``): no token and no provider's
key. On a runner it runs in a step of its own that holds neither token nor key, because a
program can read its parent's ``/proc/<pid>/environ``. A notifier that fails, hangs
or is missing is reported back as one line and otherwise ignored: a broken webhook is not a
reason to throw away an implementation.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence

from magi.core.person.notify import argv

__all__ = ["TIMEOUT_S", "send"]

TIMEOUT_S = 30.0
# What a notifier is given of magi's environment: enough to find programs, its home and
# locale, and a desktop session (notify-send, a terminal bell); never a token or a
# provider's key, whatever else magi holds.
_KEPT = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "TERM",
        "TMPDIR",
        "TZ",
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "DBUS_SESSION_BUS_ADDRESS",
        "MAGI_WEB_URL",
    }
)


def _env(environ: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in environ.items() if k in _KEPT or k.startswith(("LC_", "XDG_"))}


def send(
    command: Sequence[str], fields: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> str | None:
    """Run the notifier; None when it succeeded, else why it did not (one line)."""
    if not command:
        return None
    args = argv(command, fields)
    try:
        done = subprocess.run(
            args,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TIMEOUT_S,
            env=_env(os.environ if environ is None else environ),
            check=False,
        )
    except FileNotFoundError:
        return f"the notifier {args[0]!r} is not on PATH"
    except subprocess.TimeoutExpired:
        return f"the notifier {args[0]!r} did not finish within {TIMEOUT_S:.0f} s"
    except (OSError, ValueError) as e:  # ValueError: a NUL in an argument
        return f"the notifier {args[0]!r} could not start: {getattr(e, 'strerror', None) or e}"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        tail = f": {said[-1][:200]}" if said else ""
        return f"the notifier {args[0]!r} exited {done.returncode}{tail}"
    return None
