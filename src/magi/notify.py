"""Running ``[notify] command``: out of band, never in the way (seed 000).

The argv comes from ``magi.core.notify``; the command runs with no shell, no stdin, a short
timeout, and an environment without a credential (a notifier is the user's program, but
the job it runs in may hold a token it has no business with). A notifier that fails, hangs
or is missing is reported back as one line and otherwise ignored: a broken webhook is not a
reason to throw away an implementation.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence

from magi.core.notify import argv

__all__ = ["TIMEOUT_S", "send"]

TIMEOUT_S = 30.0
# Never handed to a notifier: the tokens and keys a magi process may hold.
_WITHHELD = ("GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "MAGI_GITHUB_TOKEN")
_WITHHELD_PREFIXES = ("MAGI_MARKER_KEY", "ACTIONS_", "GITHUB_APP_", "INPUT_")


def _env(environ: Mapping[str, str]) -> dict[str, str]:
    return {
        k: v
        for k, v in environ.items()
        if k not in _WITHHELD and not k.startswith(_WITHHELD_PREFIXES)
    }


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
    except OSError as e:
        return f"the notifier {args[0]!r} could not start: {e.strerror or e}"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        tail = f": {said[-1][:200]}" if said else ""
        return f"the notifier {args[0]!r} exited {done.returncode}{tail}"
    return None
