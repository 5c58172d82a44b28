"""Is each agent logged in? Asked through the CLI's own status command, before any run.

Each check runs in the agent's own environment (the allowlist, its ``pass_env`` and ``env``:
what its turns will see), with stdin closed and a short timeout, and reaches no provider.
What the real CLIs print, logged in or not, is recorded in docs/agents-verified.md:

- claude ``claude auth status``: JSON ``{"loggedIn": false, ...}``, exit 1 when not;
- codex ``codex login status``: exit 1 and "Not logged in" on stderr; exit 0 and
  "Logged in using ..." / "API key configured - sk-..." (magi never repeats the key);
- opencode ``opencode auth list``: "N credentials" (its auth.json) and "N environment
  variable(s)" (provider keys it can see); any of them counts;
- gemini has no status command: the auth method its headless mode would pick (the one in
  ``<home>/.gemini/settings.json``, ``security.auth.selectedType``, else the first of its
  auth variables), checked as gemini checks it before a turn (``validateAuthMethod``);
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
        fix = "run `codex login` (or `codex login --with-api-key`, or pass CODEX_API_KEY)"
        if env.get("OPENAI_API_KEY"):
            # Seen against a scripted model (docs/agents-verified.md): `codex exec` with only
            # OPENAI_API_KEY and no login sends no credential at all, 401 on every request.
            why = "not logged in; OPENAI_API_KEY alone is no login: codex exec sends no key"
            return AuthStatus(
                False, why, "pass the key as CODEX_API_KEY, or run `codex login --with-api-key`"
            )
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


# gemini 0.61.0, getAuthTypeFromEnv: without an auth method in settings, the first of these
# set picks one (in this order). GOOGLE_GEMINI_BASE_URL picks "gateway", which headless
# gemini's validateAuthMethod refuses ("Invalid auth method selected.", exit 41): a base
# URL works only beside a settings.json that selects gemini-api-key.
GEMINI_AUTH_ENV = {
    "GOOGLE_GENAI_USE_GCA": ("true", "oauth-personal"),
    "GOOGLE_GENAI_USE_VERTEXAI": ("true", "vertex-ai"),
    "GOOGLE_GEMINI_BASE_URL": (None, "gateway"),
    "GEMINI_API_KEY": (None, "gemini-api-key"),
    "CLOUD_SHELL": ("true", "compute-default-credentials"),
    "GEMINI_CLI_USE_COMPUTE_ADC": ("true", "compute-default-credentials"),
}
_SELECTED = re.compile(r'"(?:selectedType|selectedAuthType)"\s*:\s*"([^"]+)"')
_GEMINI_FIX = (
    "run `gemini` once in a terminal to choose a login, or pass GEMINI_API_KEY in pass_env"
)


def _gemini_method_from_env(env: Mapping[str, str]) -> tuple[str, str] | None:
    for name, (wanted, method) in GEMINI_AUTH_ENV.items():
        value = env.get(name)
        if value and (wanted is None or value == wanted):
            return method, name
    return None


def gemini_method_status(
    method: str, how: str, env: Mapping[str, str], gemini_dir: Path
) -> AuthStatus:
    """What headless gemini 0.61.0 makes of an auth method (its ``validateAuthMethod``),
    ``how`` saying where the method came from."""
    if method == "oauth-personal":
        if not (gemini_dir / "oauth_creds.json").exists():
            return AuthStatus(False, "Login with Google chosen, but no stored login", _GEMINI_FIX)
        return AuthStatus(True, f"Login with Google ({how})")
    if method == "compute-default-credentials":
        return AuthStatus(True, f"{method} ({how})")
    if method == "gemini-api-key":
        if env.get("GEMINI_API_KEY"):
            return AuthStatus(True, f"{method} with GEMINI_API_KEY ({how})")
        # gemini may have a key it stored itself (its keychain or credentials file).
        return AuthStatus(None, f"{method} ({how}), but GEMINI_API_KEY is not passed")
    if method == "vertex-ai":
        if (env.get("GOOGLE_CLOUD_PROJECT") and env.get("GOOGLE_CLOUD_LOCATION")) or env.get(
            "GOOGLE_API_KEY"
        ):
            return AuthStatus(True, f"{method} ({how})")
        fix = "pass GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION, or GOOGLE_API_KEY"
        return AuthStatus(False, f"{method} ({how}) without its project or key", fix)
    fix = (
        "select gemini-api-key in <home>/.gemini/settings.json "
        '({"security": {"auth": {"selectedType": "gemini-api-key"}}}) and pass GEMINI_API_KEY'
    )
    return AuthStatus(False, f"auth method {method!r} ({how}): headless gemini refuses it", fix)


def check_gemini(
    cfg: AgentConfig, env: Mapping[str, str], timeout: float = AUTH_TIMEOUT_S
) -> AuthStatus:
    home = env.get("GEMINI_CLI_HOME") or env.get("HOME")
    gemini_dir = Path(home) / ".gemini" if home else None
    selected: str | None = None
    where = "settings.json"
    if gemini_dir is not None:
        settings = gemini_dir / "settings.json"
        where = str(settings)
        try:
            # settings.json may hold comments (gemini strips them): the key is found by pattern.
            found = _SELECTED.search(settings.read_text(encoding="utf-8"))
        except OSError:
            found, where = None, f"{settings}: it does not exist"
        selected = found.group(1) if found else None
    if selected is not None and gemini_dir is not None:
        return gemini_method_status(selected, f"in {where}", env, gemini_dir)
    from_env = _gemini_method_from_env(env)
    if from_env is not None:
        method, name = from_env
        status = gemini_method_status(method, f"{name} is set", env, gemini_dir or Path(".gemini"))
        return AuthStatus(True, f"{name} is set") if status.ok else status
    if gemini_dir is None:
        return AuthStatus(None, "no HOME in the agent's environment: settings.json not found")
    return AuthStatus(False, f"no auth method in {where}", _GEMINI_FIX)


def check_antigravity(
    cfg: AgentConfig, env: Mapping[str, str], timeout: float = AUTH_TIMEOUT_S
) -> AuthStatus:
    return AuthStatus(None, "not checked: agy has no status command magi knows")


def _said(res: process.ProcessResult) -> str:
    return tail(scrub(res.stderr, limit=_MAX_OUTPUT)) or tail(res.stdout) or "no output"
