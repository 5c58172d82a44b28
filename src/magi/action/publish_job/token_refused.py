"""Why GitHub refused to mint magi's App token, found out and said on the thread.

A job that writes (publish, the merge gate, a council's or a landing's publish) first mints
an installation token with ``actions/create-github-app-token``. When GitHub refuses, that
step's log holds GitHub's words and the thread holds nothing, and a new user is left to
guess between four causes that each have their own fix. This step, run only after that
failure, asks GitHub the questions that tell them apart, with the App's own credentials
(the JWT the key signs; no installation token is needed):

1. the secrets are empty, or the key is not a PEM private key at all;
2. ``GET /app`` refuses the JWT (401): the key is not one of the App that the client id
   names (or it was deleted), or no App has that client id;
3. ``GET /repos/{owner}/{repo}/installation`` answers 404: the App is not installed here,
   or its installation was not given this repository; suspended: it was suspended;
4. the installation has not granted a permission the job asks for: the App does not ask
   for it (its settings must), or the App's newer permissions were never accepted here.

The words go on the thread with the job's own ``GITHUB_TOKEN`` (``issues: write``), the one
way left to say it there, and in the job's summary. Nothing here reads a credential into
a message: the client id is public (it is in the App's page), the key never is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from magi.core.threads.posting import inert
from magi.github.models import Repo
from magi.github.port import GitHubError

# What each job of workflows/magi.yml asks its token for (its create-github-app-token
# step's permission-* inputs; a test holds the two equal). A job not named here is checked
# for credentials and installation only. An input that depends on the event is written as
# it is for the events this step runs on (an issue's thread): receive asks ``checks:
# write`` only for ``merge_group``, which has no thread to say a refusal on.
ASKED: dict[str, dict[str, str]] = {
    "receive": {
        "contents": "write",
        "actions": "write",
        "pull-requests": "read",
        "issues": "write",
        "checks": "read",
        "statuses": "read",
    },
    "publish": {
        "contents": "write",
        "workflows": "write",
        "pull-requests": "write",
        "issues": "write",
        "checks": "write",
        "actions": "write",
    },
    "council-publish": {"issues": "write", "pull-requests": "write", "checks": "write"},
    "land-publish": {
        "contents": "write",
        "workflows": "write",
        "pull-requests": "write",
        "issues": "write",
    },
    "rebase": {
        "contents": "write",
        "workflows": "write",
        "pull-requests": "write",
        "issues": "write",
    },
}

_LEVEL = {"read": 1, "write": 2, "admin": 3}


class AppProbe(Protocol):
    """The two questions asked with the App's JWT (``magi.github.auth.AppAuth`` answers)."""

    async def app_info(self) -> dict[str, Any]: ...
    async def repo_installation(self, repo: Repo) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Found:
    """What was wrong, in one sentence, and what to do about it."""

    why: str
    fix: str


def _wanting(asked: Mapping[str, str], granted: Mapping[str, Any]) -> dict[str, str]:
    """The permissions ``asked`` for at a level ``granted`` does not reach."""
    out = {}
    for name, level in asked.items():
        have = granted.get(name.replace("-", "_"), granted.get(name))
        if _LEVEL.get(str(have), 0) < _LEVEL.get(level, 0):
            out[name] = level
    return out


def _listed(perms: Mapping[str, str]) -> str:
    return ", ".join(f"`{k}: {v}`" for k, v in sorted(perms.items()))


# What a pasted secret looks like, by its shape alone: the thread may be public, and a
# client secret or a key pasted into MAGI_APP_CLIENT_ID must never be repeated there.
_SHAPES = (
    (re.compile(r"(?:gh[pousr]|github_pat)_\w+"), "a GitHub token, not a client ID"),
    (re.compile(r"[0-9a-f]{40}"), "40 hex digits: a client secret, not a client ID"),
    (re.compile(r"[0-9]{1,12}"), "digits only: an App ID, not its client ID"),
    (re.compile(r"Iv[0-9A-Za-z.]{8,30}"), "shaped like a GitHub App client ID"),
)


def shape(value: str) -> str:
    """A secret's value described by its length and kind, never shown."""
    value = value.strip()
    if "PRIVATE KEY-----" in value:
        kind: str | None = "a private key (PEM), not a client ID"
    else:
        kind = next((what for rule, what in _SHAPES if rule.fullmatch(value)), None)
    return f"{len(value)} characters, {kind or 'not shaped like a GitHub App client ID'}"


def credentials_problem(client_id: str, key: str) -> Found | None:
    """The secrets themselves: missing, or a key that is no PEM private key."""
    if not client_id.strip():
        return Found(
            "the repository secret MAGI_APP_CLIENT_ID is empty or missing",
            "store the App's client ID (on the App's settings page, `Client ID`) in it",
        )
    if not key.strip():
        return Found(
            "the repository secret MAGI_APP_PRIVATE_KEY is empty or missing",
            "generate a private key on the App's settings page and store the whole .pem in it",
        )
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        loaded = load_pem_private_key(key.strip().encode(), password=None)
    except (ValueError, TypeError):
        return Found(
            "the repository secret MAGI_APP_PRIVATE_KEY is not a PEM private key",
            "store the whole .pem file GitHub gave you, its BEGIN and END lines included",
        )
    if not isinstance(loaded, rsa.RSAPrivateKey):
        return Found(
            "the repository secret MAGI_APP_PRIVATE_KEY is not an RSA key (a GitHub App's "
            "private keys are RSA)",
            "store the .pem GitHub generated on the App's settings page",
        )
    return None


async def diagnose(probe: AppProbe, repo: Repo, client_id: str, job: str) -> Found:
    """Ask GitHub, with the App's JWT, which of the causes it is."""
    try:
        app = await probe.app_info()
    except GitHubError as exc:
        if exc.status in (401, 403, 404):
            return Found(
                f"GitHub refused the App's credentials ({exc.status}): MAGI_APP_PRIVATE_KEY "
                "is not a private key of the App whose client ID is in MAGI_APP_CLIENT_ID "
                f"({shape(client_id)}), or it was deleted, or no App has that client ID",
                "on the App's settings page check its Client ID against MAGI_APP_CLIENT_ID, "
                "generate a private key and store it in MAGI_APP_PRIVATE_KEY",
            )
        return _unanswered(exc)
    slug = str(app.get("slug") or "")
    name = f"`{slug}` (App {app.get('id', '?')})" if slug else f"App {app.get('id', '?')}"
    install = f"https://github.com/apps/{slug}/installations/new" if slug else ""
    try:
        inst = await probe.repo_installation(repo)
    except GitHubError as exc:
        if exc.status == 404:
            where = f" at {install}" if install else ""
            return Found(
                f"the GitHub App {name} is not installed on {repo.full_name}, or its "
                "installation was not given access to this repository",
                f"install it{where}, with access to {repo.full_name}",
            )
        return _unanswered(exc)
    settings = str(inst.get("html_url") or "the installation's settings")
    if inst.get("suspended_at"):
        return Found(
            f"the installation of {name} on {repo.full_name} is suspended",
            f"unsuspend it at {settings}",
        )
    asked = ASKED.get(job, {})
    wanting = _wanting(asked, inst.get("permissions") or {})
    if wanting:
        unasked = _wanting(wanting, app.get("permissions") or {})
        if unasked:
            return Found(
                f"the `{job}` job asks for {_listed(wanting)}, and the App {name} does not "
                f"ask for {_listed(unasked)} itself",
                "add them on the App's settings page (Permissions; app.yml lists what magi "
                f"needs), then accept the new permissions at {settings}",
            )
        return Found(
            f"the `{job}` job asks for {_listed(wanting)}, which the App {name} asks for but "
            f"its installation on {repo.full_name} has not accepted",
            f"accept the App's updated permissions at {settings}",
        )
    return Found(
        "GitHub refused it for a reason magi cannot see from here (the App, its key and its "
        f"installation on {repo.full_name} look right)",
        "read GitHub's words in the failed `create-github-app-token` step's log",
    )


def _unanswered(exc: GitHubError) -> Found:
    return Found(
        f"GitHub did not answer magi's questions about the App ({exc.status or 'no answer'}: "
        f"{inert(exc.message, 200)})",
        "try again once GitHub answers (https://www.githubstatus.com)",
    )


def body(found: Found, job: str, run_url: str) -> str:
    """The comment: what failed, why, the fix, and how to try again."""
    return (
        f"magi could not act here: GitHub refused to mint magi's App token in the `{job}` "
        f"job ({run_url}).\n\n**Why:** {found.why}.\n\n**Fix:** {found.fix}. Then try "
        "again: `/magi retry` on an issue, a new `merge` or a push on a pull request."
    )
