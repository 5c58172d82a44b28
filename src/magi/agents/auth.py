"""Is each agent logged in? Asked through the CLI's own status command, before any run.

Each check runs in the agent's own environment (the allowlist, its ``pass_env`` and ``env``:
what its turns will see), with stdin closed and a short timeout, and reaches no provider.
What the real CLIs print, logged in or not, is recorded in docs/agents-verified.md:

- claude ``claude auth status``: JSON ``{"loggedIn": false, ...}``, exit 1 when not;
- codex ``codex login status``: exit 1 and "Not logged in" on stderr; exit 0 and
  "Logged in using ..." / "API key configured - sk-..." (magi never repeats the key);
- opencode ``opencode auth list``: "N credentials" (its auth.json) and "N environment
  variable(s)" (provider keys it can see); any of them counts;
- gemini has no status command: an auth method in ``<home>/.gemini/settings.json``
  (``security.auth.selectedType``) or one of its auth variables in the agent's environment;
- antigravity: not checked (no agy to learn a status command from).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from magi.agents import process
from magi.agents.cli import executable, tail
from magi.agents.events import Event, Flag, Str, document
from magi.agents.hookspecs import AuthStatus
from magi.agents.live import scrub
from magi.model.config import AgentConfig

AUTH_TIMEOUT_S = 20.0
_MAX_OUTPUT = 64_000


def _status_command(
    cfg: AgentConfig, default: str, sub: list[str], env: Mapping[str, str], timeout: float
) -> tuple[process.ProcessResult, str] | AuthStatus:
    """Run ``<exe> <sub>``; an `AuthStatus` saying why not when it did not finish."""
    argv = [*executable(cfg, default), *sub]
    shown = " ".join([default, *sub])
    res = process.run(
        argv, cwd=None, stdin=None, env=env, timeout=timeout, output_max_bytes=_MAX_OUTPUT
    )
    if res.start_error is not None:
        return AuthStatus(None, f"could not run `{shown}`: {res.start_error}")
    if res.timed_out:
        return AuthStatus(None, f"`{shown}` did not answer within {timeout:g} s")
    return res, shown


class ClaudeAuth(Event):
    loggedIn: Flag = None  # claude's own spelling
    authMethod: Str = None
    apiKeySource: Str = None


def check_claude(
    cfg: AgentConfig, env: Mapping[str, str], timeout: float = AUTH_TIMEOUT_S
) -> AuthStatus:
    ran = _status_command(cfg, "claude", ["auth", "status"], env, timeout)
    if isinstance(ran, AuthStatus):
        return ran
    res, shown = ran
    status = document(res.stdout, ClaudeAuth)
    if status is not None and status.loggedIn:
        how = status.apiKeySource or status.authMethod
        return AuthStatus(True, f"logged in ({how})" if how else "logged in")
    if (status is not None and status.loggedIn is False) or res.exit_code == 1:
        fix = "run `claude auth login` (or pass ANTHROPIC_API_KEY through pass_env)"
        return AuthStatus(False, "not logged in", fix)
    return AuthStatus(None, f"`{shown}` exited {res.exit_code}: {_said(res)}")


_CODEX_IN = re.compile(r"Logged in using [A-Za-z ]+|API key configured", re.IGNORECASE)


# Named in the 0.171.0 binary: "... run `codex login` or set CODEX_API_KEY"; codex's status
# command does not look at them (it says "Not logged in" with CODEX_API_KEY set).
CODEX_KEY_ENV = ("CODEX_API_KEY", "CODEX_ACCESS_TOKEN")


def check_codex(
    cfg: AgentConfig, env: Mapping[str, str], timeout: float = AUTH_TIMEOUT_S
) -> AuthStatus:
    for name in CODEX_KEY_ENV:
        if env.get(name):
            return AuthStatus(True, f"{name} is set")
    ran = _status_command(cfg, "codex", ["login", "status"], env, timeout)
    if isinstance(ran, AuthStatus):
        return ran
    res, shown = ran
    said = f"{res.stdout}\n{res.stderr}"
    if res.exit_code == 0:
        found = _CODEX_IN.search(said)  # the key's fragment that follows is never repeated
        return AuthStatus(True, found.group(0) if found else "logged in")
    if "not logged in" in said.lower():
        if env.get("OPENAI_API_KEY"):  # unverified whether `codex exec` uses it: not a refusal
            return AuthStatus(
                None, "not logged in, but OPENAI_API_KEY is passed (codex may use it)"
            )
        fix = "run `codex login` (or `codex login --with-api-key`, or pass CODEX_API_KEY)"
        return AuthStatus(False, "not logged in", fix)
    return AuthStatus(None, f"`{shown}` exited {res.exit_code}: {_said(res)}")


_OPENCODE_COUNT = re.compile(r"(\d+)\s+(credentials?|environment variables?)", re.IGNORECASE)


def check_opencode(
    cfg: AgentConfig,
    env: Mapping[str, str],
    timeout: float = AUTH_TIMEOUT_S,
    key_env_vars: tuple[str, ...] = (),
) -> AuthStatus:
    keys = [k for k in key_env_vars if env.get(k)]
    if keys:  # a provider key its turns will see is a login, whatever auth.json holds
        return AuthStatus(True, f"provider key {', '.join(keys)} passed")
    ran = _status_command(cfg, "opencode", ["auth", "list"], env, timeout)
    if isinstance(ran, AuthStatus):
        return ran
    res, shown = ran
    counts = _OPENCODE_COUNT.findall(scrub(res.stdout, limit=_MAX_OUTPUT))
    if res.exit_code != 0 or not counts:
        return AuthStatus(None, f"`{shown}` exited {res.exit_code}: {_said(res)}")
    total = sum(int(n) for n, _ in counts)
    if total:
        return AuthStatus(True, f"{total} credential(s) in `{shown}`")
    fix = "run `opencode auth login`, or pass a provider key (e.g. ANTHROPIC_API_KEY) in pass_env"
    return AuthStatus(False, "no credentials", fix)


# gemini 0.61.0, getAuthTypeFromEnv: any of these picks an auth method without settings.
GEMINI_AUTH_ENV = {
    "GEMINI_API_KEY": None,
    "GOOGLE_GENAI_USE_GCA": "true",
    "GOOGLE_GENAI_USE_VERTEXAI": "true",
    "GOOGLE_GEMINI_BASE_URL": None,
    "GEMINI_CLI_USE_COMPUTE_ADC": "true",
    "CLOUD_SHELL": "true",
}
_SELECTED = re.compile(r'"(?:selectedType|selectedAuthType)"\s*:\s*"([^"]+)"')


def check_gemini(
    cfg: AgentConfig, env: Mapping[str, str], timeout: float = AUTH_TIMEOUT_S
) -> AuthStatus:
    for name, wanted in GEMINI_AUTH_ENV.items():
        value = env.get(name)
        if value and (wanted is None or value == wanted):
            return AuthStatus(True, f"{name} is set")
    home = env.get("GEMINI_CLI_HOME") or env.get("HOME")
    fix = "run `gemini` once in a terminal to choose a login, or pass GEMINI_API_KEY in pass_env"
    if not home:
        return AuthStatus(None, "no HOME in the agent's environment: settings.json not found")
    gemini_dir = Path(home) / ".gemini"
    settings = gemini_dir / "settings.json"
    try:
        # settings.json may hold comments (gemini strips them), so the key is found by pattern.
        found = _SELECTED.search(settings.read_text(encoding="utf-8"))
    except OSError:
        return AuthStatus(False, f"no auth method: {settings} does not exist", fix)
    if found is None:
        return AuthStatus(False, f"no auth method in {settings}", fix)
    method = found.group(1)
    if method == "oauth-personal" and not (gemini_dir / "oauth_creds.json").exists():
        return AuthStatus(False, "Login with Google chosen, but no stored login", fix)
    return AuthStatus(True, f"auth method {method} in {settings}")


def check_antigravity(
    cfg: AgentConfig, env: Mapping[str, str], timeout: float = AUTH_TIMEOUT_S
) -> AuthStatus:
    return AuthStatus(None, "not checked: agy has no status command magi knows")


def _said(res: process.ProcessResult) -> str:
    return tail(scrub(res.stderr, limit=_MAX_OUTPUT)) or tail(res.stdout) or "no output"
