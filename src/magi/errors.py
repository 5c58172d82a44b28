"""The exception tree and the exit codes: every error magi raises on purpose, and every code
any of its commands (the CLI, the council, the Action) exits with.

    MagiError                      exit 1
    ├── UsageError                 exit 2   a command line that cannot mean anything
    ├── ConfigError                exit 3   config file: syntax, template, unknown key, layer clash
    ├── SettingsError              exit 3   the App's settings: every missing or wrong one
    ├── StateError                 exit 4   run.json unreadable, foreign schema, unknown run id
    │   └── RunLockedError         exit 4   another live process holds the run (magi.state.lock)
    ├── RepoError                  exit 5   not a git repository, unknown base branch, git failed
    ├── AgentError                 exit 6   an agent could not be started at all (missing CLI)
    ├── AnswerError                exit 7   an agent's structured answer could not be parsed
    ├── PreflightError             the worst exit code among the problems that stop a run
    ├── GitHubError                exit 1   a GitHub call failed (``status``, ``transient``)
    └── ActionError                exit 20  the Action cannot do what it was asked as things stand
        ├── AnsweredAlready        exit 20  a /magi answer to a question another answer took
        ├── CredentialsInCheckout  exit 21  the agents job's checkout hands out a credential
        ├── TamperedArtifact       exit 22  compete's artifact or bundle is not what it wrote
        ├── LeaseRejected          exit 20  a branch on GitHub moved since magi pushed it
        ├── PushRefused            exit 20  GitHub refused a push for a reason of its own
        └── StaleFork              exit 20  a seat job's result of an earlier fork

``ExitCode`` is the one table of codes: these errors' codes, a run's and a council's
outcomes, a rebase that conflicts, and the signals. README's tables are held against it by a
test. Transient errors (worth retrying as they are) set ``transient = True``; the rest are
permanent until a person changes something. The CLI turns any of these into its message
and its exit code; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import enum
from pathlib import Path


class ExitCode(enum.IntEnum):
    """Every exit code magi's commands use, once."""

    OK = 0  # a run ready, merged or a verified no-op; a council that passed
    FAILED = 1  # a run that failed; a council that rejected; an error of no finer kind
    USAGE = 2
    CONFIG = 3  # also a council that could not sit (a config or PATH that seats fewer than 2)
    STATE = 4
    REPO = 5
    AGENT = 6
    ANSWER = 7
    BLOCKED = 10
    STALLED = 11  # rate limits: --resume later
    HELD = 12  # a budget cap
    NO_CONSENSUS = 13  # a council with no consensus, or inconclusive
    CONDITIONAL = 14  # a council that passed with conditions
    PARKED = 15
    REBASE_CONFLICT = 16  # magi action rebase: the PR does not rebase onto its base cleanly
    ASKING = 17  # parked on an agent's question: answer it, then resume
    HANDED_OFF = 18  # a seat's agent runs on another runner: the workflow carries it on there
    ACTION = 20
    CREDENTIALS_IN_CHECKOUT = 21
    TAMPERED_ARTIFACT = 22
    HANGUP = 129  # 128 + SIGHUP: the run is left interrupted
    INTERRUPTED = 130  # 128 + SIGINT (Ctrl-C)
    TERMINATED = 143  # 128 + SIGTERM


class MagiError(Exception):
    """Base of every error magi raises on purpose."""

    exit_code: int = ExitCode.FAILED
    transient: bool = False

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UsageError(MagiError):
    """The command line asks for something that cannot be done as written."""

    exit_code = ExitCode.USAGE


class ConfigError(MagiError):
    """A config file is malformed; names the file, and the line or key path when known."""

    exit_code = ExitCode.CONFIG

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

    exit_code = ExitCode.STATE

    def __init__(self, message: str, *, path: Path | None = None) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path


class RepoError(MagiError):
    """The repository is not usable: not a git repo, unknown branch, a git command failed."""

    exit_code = ExitCode.REPO


class AgentError(MagiError):
    """An agent could not be started at all (its CLI is missing, its config is wrong)."""

    exit_code = ExitCode.AGENT


class PreflightError(MagiError):
    """A run cannot start; carries the exit code of the worst problem found (see doctor)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class AnswerError(MagiError):
    """An agent's reply does not hold the structured answer its seat owes."""

    exit_code = ExitCode.ANSWER


class SettingsError(MagiError):
    """The App cannot start: every missing or wrong setting, one a line."""

    exit_code = ExitCode.CONFIG

    def __init__(self, problems: list[str]) -> None:
        lines = "\n".join(f"  {p}" for p in problems)
        super().__init__(f"the magi App cannot start:\n{lines}")
        self.problems = problems


class ActionError(MagiError):
    """The Action cannot do what it was asked as things stand; the message says the fix."""

    exit_code = ExitCode.ACTION


class AnsweredAlready(ActionError):
    """A ``/magi answer`` whose question was given its answer already (another comment's)."""


class CredentialsInCheckout(ActionError):
    """The agents job's checkout carries a credential every worktree (and agent) can read."""

    exit_code = ExitCode.CREDENTIALS_IN_CHECKOUT


class StaleFork(ActionError):
    """A forked wave's result sealed for an earlier fork of the run (a seat job run late):
    the join asks its seats again rather than taking it."""


class TamperedArtifact(ActionError):
    """The artifact or its bundle is not what compete writes: publish refuses it whole."""

    exit_code = ExitCode.TAMPERED_ARTIFACT


class LeaseRejected(ActionError):
    """A branch on GitHub is not where magi last pushed it: someone else moved it."""


class PushRefused(ActionError):
    """GitHub refused a push for a reason of its own (``[remote rejected] (<reason>)``)."""


class GitHubError(MagiError):
    """A GitHub call failed; ``status`` is the HTTP status (0 for network or timeout)."""

    def __init__(
        self, message: str, *, status: int = 0, transient: bool = False, auth: bool = False
    ) -> None:
        super().__init__(message)
        self.status = status
        self.transient = transient
        self.auth = auth  # the App's own credentials were refused (key, id, installation)
