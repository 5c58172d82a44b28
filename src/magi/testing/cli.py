"""Run the ``magi`` CLI in-process for tests: argv in, exit code and captured output out.

Shipped in the package (as click ships its CliRunner) so that plugins and the action can
test their commands the same way magi does. Output is captured through a non-TTY stream,
so what a test reads is exactly what ``magi ... | cat`` would print.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from typer.testing import CliRunner

__all__ = ["Result", "invoke"]

# Variables that would make rich or typer colour output that is not a terminal.
_COLOUR_FORCING = ("FORCE_COLOR", "PY_COLORS", "GITHUB_ACTIONS", "TTY_COMPATIBLE")


@dataclass(frozen=True)
class Result:
    """What one invocation did."""

    exit_code: int
    stdout: str
    stderr: str
    exception: BaseException | None

    @property
    def output(self) -> str:
        """stdout and stderr together (interleaving is not preserved)."""
        return self.stdout + self.stderr


def invoke(
    args: Sequence[str],
    *,
    env: Mapping[str, str | None] | None = None,
    input: str | None = None,
    catch_exceptions: bool = False,
    obj: object = None,
) -> Result:
    """Invoke ``magi args...``; ``env`` overrides os.environ for the call (None unsets);
    ``obj`` is handed to the commands (``magi.action.context.ActionContext``, say).

    Exceptions that are not MagiError propagate by default, so a bug fails the test with
    its own traceback instead of a bare exit code 1.
    """
    from magi.cli import app

    overrides: dict[str, str | None] = dict.fromkeys(_COLOUR_FORCING)
    overrides.update(env or {})
    result = CliRunner().invoke(
        app,
        list(args),
        input=input,
        env=overrides,
        catch_exceptions=catch_exceptions,
        prog_name="magi",
        obj=obj,
    )
    exception = result.exception
    if isinstance(exception, SystemExit):
        exception = None
    return Result(result.exit_code, result.stdout, result.stderr, exception)
