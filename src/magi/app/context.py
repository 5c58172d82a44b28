"""What every handler is given: how to reach GitHub, the clock, and the App's shared helpers.

No state of the App's own lives here. What must outlive one delivery is in the repository:
claim refs, and markers in the App's own comments (``magi.core.threads.markers``), which are read
back only from comments the App itself wrote and only when sealed by its key, so nobody can
forge one by typing it, nor by getting the App to quote it.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from magi.core.person.park import channel
from magi.core.threads.markers import Seal
from magi.errors import ConfigError
from magi.github.models import Comment, Dispatch, Repo
from magi.github.port import GitHubError, GitHubPort
from magi.github.records import RecordCache
from magi.github.state import CONFIG_PATH, own_bodies, repo_config, said_ref
from magi.github.state import reply_once as _reply_once

__all__ = [
    "CONFIG_PATH",
    "AppContext",
    "PortFactory",
    "config_error_reply",
    "reply_once",
    "repo_config",
    "said_ref",
]
PortFactory = Callable[[int | None, Repo], Awaitable[GitHubPort]]


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class AppContext:
    """The App's collaborators, passed to every handler."""

    ports: PortFactory
    app_login: str
    seal: Seal  # magi's markers: written sealed, read only when the seal verifies
    clock: Callable[[], datetime] = _now
    rand: random.Random = field(default_factory=random.Random)
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("magi.app"))
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    # Issue 11 plugs its patch-id rule in here: (approved sha, head sha) -> same change?
    same_change: Callable[[str, str], bool] | None = None
    # run records already read (`/magi stats`): a commit never changes, so this is no state
    records: RecordCache = field(default_factory=RecordCache)
    # Where runners reach this App (``MAGI_PUBLIC_URL``): with it, `/magi stop` parks a run
    # at its next node boundary; without it, it can only cancel (``magi.core.person.park``).
    public_url: str | None = None
    # Without a receiver: the handlers run in the workflow's receive job (``magi receive``),
    # so what they say names no receiver's setting (a stop cancels; nothing can park).
    serverless: bool = False
    # A run's park answer, (repo, run) -> (park? (None: GitHub did not answer), until, the
    # park ref's sha): a key is in public logs on a public repository, so questions cost
    # GitHub one read per run per few seconds at most (``magi.app.park``), a "yes" and an
    # error included. A retry or an answer withdraws the park and drops the entry at once.
    parks: dict[tuple[str, str], tuple[bool | None, datetime, str]] = field(default_factory=dict)

    def forget_park(self, repo: Repo, run_id: str) -> None:
        self.parks.pop((repo.full_name.lower(), run_id), None)

    def park_input(self, repo: Repo, run_id: str) -> dict[str, str]:
        """The ``park`` input of a competition's dispatch: where and with which key its jobs
        ask whether to park (none without a public address or a run id)."""
        if not self.public_url or not run_id:
            return {}
        return {"park": channel(self.public_url, self.seal, repo.full_name, run_id).to_input()}

    def own(self, comments: list[Comment]) -> list[str]:
        """The bodies of the comments this App wrote (the only ones whose markers count):
        its bot, ``<slug>[bot]`` of type Bot, never a person who took the slug as a login."""
        return own_bodies(self.app_login, comments)

    def step(self, delivery: str, repo: Repo, step: str, outcome: str) -> None:
        self.log.info(
            step,
            extra={"delivery": delivery, "repo": repo.full_name, "step": step, "outcome": outcome},
        )


async def reply_once(
    ctx: AppContext, gh: GitHubPort, repo: Repo, number: int, key: str, body: str, sha: str
) -> bool:
    """``magi.github.state.reply_once`` for a handler (the App's and the workflow's are one)."""
    return await _reply_once(ctx.seal, gh, repo, number, key, body, sha)


def config_error_reply(exc: ConfigError) -> str:
    """The words for an invalid config, quoting magi's error."""
    quoted = "\n".join(f"    {line}" for line in str(exc).splitlines())
    return (
        "magi cannot start: the config on the default branch (`.magi/config.toml`, "
        f"`magi.toml`) is invalid.\n\n{quoted}\n\n"
        "Fix it on the default branch, then remove and re-add the label."
    )


async def dispatch_competition(
    gh: GitHubPort, repo: Repo, workflow: str, branch: str, inputs: dict[str, str]
) -> tuple[Dispatch, bool]:
    """Dispatch the runner workflow: (what GitHub said, whether the run got a park channel).

    GitHub refuses a dispatch naming an input the workflow does not declare (422 "Unexpected
    inputs provided"): a repository whose workflow predates the ``park`` input gets the
    dispatch again without it, and its run cannot be parked (``/magi stop`` cancels it)."""
    try:
        return await gh.dispatch_workflow(repo, workflow, branch, inputs), "park" in inputs
    except GitHubError as exc:
        if "park" not in inputs or exc.status != 422 or "park" not in exc.message:
            raise
    rest = {k: v for k, v in inputs.items() if k != "park"}
    return await gh.dispatch_workflow(repo, workflow, branch, rest), False
