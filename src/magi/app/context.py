"""What every handler is given: how to reach GitHub, the clock, and the App's shared helpers.

No state of the App's own lives here. What must outlive one delivery is in the repository:
claim refs, and markers in the App's own comments (``magi.core.markers``), which are read
back only from comments the App itself wrote, so nobody can forge one by typing it.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from magi.config import load_config_text
from magi.config.model import Config
from magi.core import markers
from magi.errors import ConfigError
from magi.github.models import Comment, Repo
from magi.github.port import GitHubError, GitHubPort

CONFIG_PATH = ".magi/config.toml"
PortFactory = Callable[[int | None, Repo], Awaitable[GitHubPort]]


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class AppContext:
    """The App's collaborators, passed to every handler."""

    ports: PortFactory
    app_login: str
    clock: Callable[[], datetime] = _now
    rand: random.Random = field(default_factory=random.Random)
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("magi.app"))
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    # Issue 11 plugs its patch-id rule in here: (approved sha, head sha) -> same change?
    same_change: Callable[[str, str], bool] | None = None

    def own(self, comments: list[Comment]) -> list[str]:
        """The bodies of the comments this App wrote (the only ones whose markers count)."""
        login = self.app_login.lower()
        return [
            c.body
            for c in comments
            if c.user is not None and c.user.login.lower() in {login, f"{login}[bot]"}
        ]

    def step(self, delivery: str, repo: Repo, step: str, outcome: str) -> None:
        self.log.info(
            step,
            extra={"delivery": delivery, "repo": repo.full_name, "step": step, "outcome": outcome},
        )


def said_ref(number: int, key: str) -> str:
    """The ref that records "this reply was said" on thread ``number``."""
    return f"refs/magi/said/{number}/{re.sub(r'[^A-Za-z0-9._-]', '-', key)}"


async def reply_once(
    ctx: AppContext, gh: GitHubPort, repo: Repo, number: int, key: str, body: str, sha: str
) -> bool:
    """Comment ``body`` unless this App already said ``key`` on this thread; True if posted.

    Saying it is claimed first by creating ``said_ref`` (at ``sha``, any commit that exists):
    creating a ref is atomic on GitHub's side, so of several deliveries racing to say the
    same thing (a check_run, its check_suite and its workflow_run arrive together) one wins.
    A reply that fails to post gives its claim back, so a later event can say it.
    """
    if not await gh.create_ref(repo, said_ref(number, key), sha):
        return False
    try:
        await gh.create_comment(
            repo, number, f"{body}\n\n{markers.marker(markers.REFUSAL, key=key)}"
        )
    except GitHubError:
        await gh.delete_ref(repo, said_ref(number, key))
        raise
    return True


async def repo_config(gh: GitHubPort, repo: Repo, default_branch: str) -> Config:
    """``.magi/config.toml`` from the default branch only; absent -> defaults.

    Raises ``ConfigError`` (magi's own, with file, line and key) when the file is invalid.
    Never read from a PR or candidate branch: a candidate must not configure its own gate.
    """
    content = await gh.get_content(repo, CONFIG_PATH, default_branch)
    if content is None:
        return Config()
    return load_config_text(content.text, CONFIG_PATH).config


def config_error_reply(exc: ConfigError) -> str:
    """The words for an invalid config, quoting magi's error."""
    quoted = "\n".join(f"    {line}" for line in str(exc).splitlines())
    return (
        f"magi cannot start: `{CONFIG_PATH}` on the default branch is invalid.\n\n{quoted}\n\n"
        "Fix it on the default branch, then remove and re-add the label."
    )
