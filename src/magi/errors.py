"""The exception tree: every error magi raises on purpose, each carrying its exit code.

    MagiError                      exit 1
    ├── UsageError                 exit 2   a command line that cannot mean anything
    ├── ConfigError                exit 3   config file: syntax, template, unknown key, layer clash
    ├── StateError                 exit 4   run.json unreadable, foreign schema, unknown run id
    ├── RepoError                  exit 5   not a git repository, unknown base branch, git failed
    ├── AgentError                 exit 6   an agent could not be started at all (missing CLI)
    ├── AnswerError                exit 7   an agent's structured answer could not be parsed
    └── PreflightError             the worst exit code among the problems that stop a run

Transient errors (worth retrying as they are) set ``transient = True``; the rest are
permanent until a person changes something. The CLI turns any of these into its message
and its exit code; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

from pathlib import Path


class MagiError(Exception):
    """Base of every error magi raises on purpose."""

    exit_code: int = 1
    transient: bool = False

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UsageError(MagiError):
    """The command line asks for something that cannot be done as written."""

    exit_code = 2


class ConfigError(MagiError):
    """A config file is malformed; names the file, and the line or key path when known."""

    exit_code = 3

    def __init__(
        self,
        message: str,
        *,
        path: Path | str | None = None,
        line: int | None = None,
        key: str | None = None,
    ) -> None:
        where = ""
        if path is not None:
            where = str(path)
            if line is not None:
                where += f":{line}"
            where += ": "
        if key:
            where += f"{key}: "
        super().__init__(f"{where}{message}")
        self.path = Path(path) if path is not None else None
        self.line = line
        self.key = key


class StateError(MagiError):
    """A run record cannot be read or written as this magi understands it."""

    exit_code = 4

    def __init__(self, message: str, *, path: Path | None = None) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path


class RepoError(MagiError):
    """The repository is not usable: not a git repo, unknown branch, a git command failed."""

    exit_code = 5


class AgentError(MagiError):
    """An agent could not be started at all (its CLI is missing, its config is wrong)."""

    exit_code = 6


class PreflightError(MagiError):
    """A run cannot start; carries the exit code of the worst problem found (see doctor)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class AnswerError(MagiError):
    """An agent's reply does not hold the structured answer its seat owes."""

    exit_code = 7
