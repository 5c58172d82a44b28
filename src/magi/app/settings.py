"""The App's settings, read from the environment once at start-up and validated as a whole.

Every problem (a variable missing, a key file unreadable, a URL that is not one) is collected
and raised as one ``SettingsError``, so a deployment is fixed in one go, not one restart per
variable. The values are secrets: ``Settings`` never prints them (see ``__repr__``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from magi.core.person.park import public_url_problem
from magi.errors import SettingsError

PUBLIC_API = "https://api.github.com"


@dataclass(frozen=True)
class Settings:
    """What the App needs to talk to GitHub and to trust its deliveries."""

    app_id: str
    private_key: str = field(repr=False)
    webhook_secret: str = field(repr=False)
    api_url: str = PUBLIC_API
    app_slug: str | None = None
    # Where runners reach this receiver (``MAGI_PUBLIC_URL``): a run asks it, at each node
    # boundary, whether a writer's `/magi stop` asked it to park (``magi.core.person.park``).
    # Without it `/magi stop` can only cancel.
    public_url: str | None = None
    # How long a delivery's answer waits for its work (``MAGI_ANSWER_WITHIN``, seconds, more
    # than 0 and under GitHub's 10): work still going then is answered 202 "working".
    answer_within: float = 8.0
    # Whether start-up asks GitHub to send again what was not finished (``MAGI_REDELIVER``,
    # 1 or 0): replicas started together would each ask for the same deliveries, so all but
    # one set it to 0.
    redeliver: bool = True


def _answer_within(environ: Mapping[str, str], problems: list[str]) -> float:
    raw = environ.get("MAGI_ANSWER_WITHIN", "").strip()
    if not raw:
        return Settings.answer_within
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value < 10:
        problems.append(
            f"MAGI_ANSWER_WITHIN is {raw!r}: seconds a delivery waits for its work, "
            "more than 0 and under GitHub's 10"
        )
    return value


def _redeliver(environ: Mapping[str, str], problems: list[str]) -> bool:
    raw = environ.get("MAGI_REDELIVER", "").strip()
    if raw not in {"", "0", "1"}:
        problems.append(
            f"MAGI_REDELIVER is {raw!r}: 1 (the default) to ask GitHub at start-up for the "
            "deliveries left unfinished, 0 on all replicas but one"
        )
    return raw != "0"


def _private_key(environ: Mapping[str, str], problems: list[str]) -> str:
    inline = environ.get("GITHUB_APP_PRIVATE_KEY", "").strip()
    path = environ.get("GITHUB_APP_PRIVATE_KEY_PATH", "").strip()
    if inline and path:
        problems.append(
            "GITHUB_APP_PRIVATE_KEY and GITHUB_APP_PRIVATE_KEY_PATH are both set: set one"
        )
        return ""
    if path:
        try:
            inline = Path(path).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(
                f"GITHUB_APP_PRIVATE_KEY_PATH: cannot read {path}: {exc.__class__.__name__}"
            )
            return ""
    if not inline:
        problems.append(
            "GITHUB_APP_PRIVATE_KEY (the PEM) or GITHUB_APP_PRIVATE_KEY_PATH (its file) is missing"
        )
        return ""
    # An env var often carries the PEM with literal \n; normalise so the JWT signer reads it.
    inline = inline.replace("\\n", "\n")
    if not inline.startswith("-----BEGIN") or "PRIVATE KEY-----" not in inline:
        problems.append("the App private key is not a PEM private key (-----BEGIN ... KEY-----)")
        return inline
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        load_pem_private_key(inline.encode(), password=None)
    except (ValueError, TypeError) as exc:  # the message names no byte of the key
        why = str(exc).split(". ")[0][:120] if str(exc) else exc.__class__.__name__
        source = "GITHUB_APP_PRIVATE_KEY_PATH" if path else "GITHUB_APP_PRIVATE_KEY"
        problems.append(f"{source}: not a usable private key ({why}); use the .pem GitHub gave")
    return inline


def settings_from_env(environ: Mapping[str, str]) -> Settings:
    """Read and check every setting; raise one ``SettingsError`` naming all problems."""
    problems: list[str] = []
    app_id = environ.get("GITHUB_APP_ID", "").strip()
    if not app_id:
        problems.append("GITHUB_APP_ID is missing (the App's numeric id or its client id)")
    key = _private_key(environ, problems)
    secret = environ.get("GITHUB_WEBHOOK_SECRET", "")
    if not secret:
        problems.append("GITHUB_WEBHOOK_SECRET is missing (the App's webhook secret)")
    api_url = environ.get("GITHUB_API_URL", "").strip() or PUBLIC_API
    parsed = urlparse(api_url)
    if parsed.scheme not in {"http", "https"} or not parsed.netloc:
        problems.append(f"GITHUB_API_URL is not an http(s) URL: {api_url!r}")
    public_url = environ.get("MAGI_PUBLIC_URL", "").strip().rstrip("/") or None
    if public_url is not None and (problem := public_url_problem(public_url)) is not None:
        problems.append(f"MAGI_PUBLIC_URL (where runners reach this receiver): {problem}")
    answer_within = _answer_within(environ, problems)
    redeliver = _redeliver(environ, problems)
    if problems:
        raise SettingsError(problems)
    slug = environ.get("GITHUB_APP_SLUG", "").strip() or None
    return Settings(
        app_id, key, secret, api_url.rstrip("/"), slug, public_url, answer_within, redeliver
    )
