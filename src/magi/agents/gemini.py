"""Gemini CLI (prompt on stdin, ``gemini --prompt=<tail> --output-format json``): argv and result.

Facts relied on are in /work/shared/agents/README.md §4 (Gemini CLI 0.61.0): magi mints the
session id (``--session-id``) and resumes with ``--resume``; ``--skip-trust`` avoids the
headless untrusted-folder exit; fatal errors are a JSON object on stderr with ``error.code``.

The prompt goes on stdin: gemini reads piped stdin and appends the ``--prompt`` text to it
(checked against 0.61.0: the stored user message is the stdin text, blank lines, then the
``--prompt`` text; see docs/agents-verified.md). A short fixed ``--prompt=`` tail keeps the
prompt out of argv: no 128 KiB argument limit, no prompt in the process list, and a prompt
beginning with ``-`` is never read as an option.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, ClassVar

from magi.agents.base import Failure, TurnRequest, TurnStatus, Usage
from magi.agents.cli import Invocation, Parsed, executable, malformed, tail
from magi.agents.events import Event, Int, Lenient, Str, document
from magi.agents.live import LiveLine, Signals
from magi.core.seats.clistate import CliState, Login, Root
from magi.model.config import AgentConfig
from magi.model.run import ModelTokens

EXECUTABLE = "gemini"
VERSION_ARGV = ("gemini", "--version")
KEY_ENV_VARS = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS")

# Where gemini keeps its state (``GEMINI_CLI_HOME`` stands for the home), and its login: the
# OAuth files, and of ``settings.json`` only the auth method chosen (headless gemini refuses
# to start without it); the rest of settings.json (hooks, MCP servers) and GEMINI.md never
# reach a seat (docs/jail.md).
_AUTH_KEYS = ("security.auth", "selectedAuthType")
_LOGINS = (
    Login("oauth_creds.json"),
    Login("google_accounts.json"),
    Login("settings.json", _AUTH_KEYS),
)
STATE = CliState(
    (
        Root("~/.gemini", _LOGINS),
        Root("$GEMINI_CLI_HOME/.gemini", _LOGINS),
    )
)

# Where its turns go, for the jail's egress allowlist: the Gemini API, Code Assist (a Google
# login), the OAuth token refresh, and Vertex AI's regional endpoints.
EGRESS_HOSTS = (
    "generativelanguage.googleapis.com",
    "cloudcode-pa.googleapis.com",
    "oauth2.googleapis.com",
    "*.aiplatform.googleapis.com",
)
# Appended by gemini after the stdin text; it must be non-empty for headless mode.
PROMPT_TAIL = "(Respond to the message above.)"
EXIT_AUTH = 41  # README §4(e): FatalAuthenticationError and friends

QUOTA = re.compile(
    r"\b429\b|RESOURCE_EXHAUSTED|exhausted your daily quota|TerminalQuotaError|RetryableQuotaError",
    re.IGNORECASE,
)
# Gemini CLI 0.61.0 offline: with a key, stderr "Attempt N failed. Retrying with backoff...
# Error: exception TypeError: fetch failed sending request" with a growing backoff (each with
# a stack trace); without one, exit 41 "Please set an Auth method in your
# ~/.gemini/settings.json ..." at once (docs/agents-verified.md).
SIGNALS = Signals(
    unreachable=re.compile(
        r"fetch failed|ENOTFOUND|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|getaddrinfo", re.IGNORECASE
    ),
    unauthenticated=re.compile(
        r"Please set an Auth method|API key not valid|API_KEY_INVALID|UNAUTHENTICATED"
        r"|FatalAuthenticationError",
        re.IGNORECASE,
    ),
)
_NOISE = re.compile(r"^(?:at |[{}\[\],]+$)")  # stack frames and the braces of pretty JSON


class GeminiTokens(Event):
    """``stats.models[<model>].tokens`` (README §4(d)): ``prompt`` counts every input token,
    ``input`` the uncached ones (like claude's input_tokens), ``cached`` the rest; thinking
    (``thoughts``) is counted apart from the answer (``candidates``) and is paid as output."""

    input: Int = None
    prompt: Int = None
    candidates: Int = None
    cached: Int = None
    thoughts: Int = None

    def usage(self, model: str) -> Usage:
        given = self.input if self.input is not None else self.prompt
        models: dict[str, ModelTokens] = {}
        if given is not None or self.candidates is not None:
            cached = self.cached or 0
            uncached = self.input if self.input is not None else max(0, (self.prompt or 0) - cached)
            out = (self.candidates or 0) + (self.thoughts or 0)
            models[model] = ModelTokens(input=uncached, cached=cached, output=out)
        return Usage(
            input_tokens=given,
            output_tokens=self.candidates,
            cached_tokens=self.cached,
            models=models,
        )


class GeminiModelStats(Event):
    tokens: Annotated[GeminiTokens | None, Lenient] = None


class GeminiStats(Event):
    models: Annotated[dict[str, Annotated[GeminiModelStats | None, Lenient]] | None, Lenient] = None

    def usage(self) -> Usage:
        """Summed over the models, and each model's kept under its own name: the stats are
        per model because one turn may call several, and each has its own price."""
        total = Usage()
        for name, model in (self.models or {}).items():
            if model is not None and model.tokens is not None:
                total = total + model.tokens.usage(name)
        return total


class GeminiError(Event):
    type: Str = None
    message: Str = None
    code: Annotated[int | str | None, Lenient] = None


class GeminiOutput(Event):
    """``gemini --output-format json``: the result on stdout, or a failure on stderr."""

    session_id: Str = None
    response: Str = None
    stats: Annotated[GeminiStats | None, Lenient] = None
    error: Annotated[GeminiError | None, Lenient] = None

    def usage(self) -> Usage:
        return self.stats.usage() if self.stats else Usage()


def _error(err: GeminiError, session_id: str | None, usage: Usage) -> Parsed:
    what = " ".join(x for x in (err.type, err.message) if x) or "unspecified error"
    quota = err.code == 429 or bool(QUOTA.search(what))
    status = TurnStatus.QUOTA if quota else TurnStatus.ERROR
    failure: Failure | None = "auth" if err.code == EXIT_AUTH else None
    return Parsed(
        status,
        session_id=session_id,
        usage=usage,
        error=f"gemini: {what} (code {err.code})",
        failure=failure,
    )


@dataclass(frozen=True)
class GeminiAdapter:
    cfg: AgentConfig
    mints_session: ClassVar[bool] = True
    needs_prompt_file: ClassVar[bool] = False
    signals: ClassVar[Signals] = SIGNALS

    def live(self, line: str) -> LiveLine:
        # json output is one object at the end: nothing on the way shows progress.
        return LiveLine(None if _NOISE.match(line) else line)

    def build(self, request: TurnRequest, session_id_to_open: str | None) -> Invocation:
        argv = [*executable(self.cfg, EXECUTABLE), f"--prompt={PROMPT_TAIL}"]
        argv += ["--output-format", "json"]
        if request.session_id:
            argv += ["--resume", request.session_id]
        elif session_id_to_open:
            argv += ["--session-id", session_id_to_open]
        if self.cfg.model:
            argv += ["-m", self.cfg.model]
        argv += ["--approval-mode", "yolo" if request.allow_write else "plan", "--skip-trust"]
        argv += self.cfg.args
        return Invocation(argv, request.prompt.encode())

    def parse(
        self, stdout: str, stderr: str, exit_code: int | None, request: TurnRequest
    ) -> Parsed:
        out = document(stdout, GeminiOutput) if stdout.strip() else None
        if out is None:
            failure = document(stderr, GeminiOutput)
            if failure is not None and failure.error is not None:
                return _error(failure.error, failure.session_id, Usage())
            if stdout.strip():
                return malformed("gemini", "no JSON object", stdout)
            status = TurnStatus.QUOTA if QUOTA.search(stderr) else TurnStatus.ERROR
            return Parsed(status, error=f"gemini exited {exit_code}: {tail(stderr) or 'no output'}")
        session_id = out.session_id or None
        usage = out.usage()
        if out.error is not None:
            return _error(out.error, session_id, usage)
        if out.response is None:
            return malformed("gemini", "the JSON object has no text 'response'", stdout)
        if exit_code != 0:
            why = tail(stderr) or "no error reported"
            return Parsed(
                TurnStatus.ERROR,
                session_id=session_id,
                usage=usage,
                error=f"gemini exited {exit_code}: {why}",
            )
        return Parsed(TurnStatus.OK, text=out.response, session_id=session_id, usage=usage)
