"""What magi reads and keeps in the repository itself: its config, claims, "said once" refs.

Shared by the App and the workflow (which runs without the App): neither keeps state of
its own, so the config is read from the default branch each time, and a reply that must be
said once is claimed first by creating a ref, which GitHub does atomically.
"""

from __future__ import annotations

import json
import logging
import re

from magi.config.load import REPO_LAYERS, load_repo_texts
from magi.core.seats.runners import first_stage, job_labels
from magi.core.threads import markers
from magi.core.threads.markers import Seal
from magi.github.models import Comment, GitRef, Repo
from magi.github.port import GitHubError, GitHubPort
from magi.model.config import Config

__all__ = [
    "CONFIG_PATH",
    "claim_ref",
    "delete_under",
    "dispatch_inputs",
    "own_bodies",
    "refs_under",
    "reply_once",
    "repo_config",
    "said_ref",
]
_log = logging.getLogger("magi.github")
# The only namespaces magi ever deletes in: its candidate branches and its own refs.
_OURS = ("refs/heads/magi/", "refs/magi/")

CONFIG_PATH = REPO_LAYERS[0]


def dispatch_inputs(config: Config, **inputs: str) -> dict[str, str]:
    """A ``workflow_dispatch``'s inputs, with the agents jobs' ``runs-on`` labels (JSON):
    the repository's config, not the workflow file's fallback. A competition starts on
    ``[github] runner_labels`` and hands a seat whose agent is logged in elsewhere on from
    there; a council, a review or a landing runs where every agent of the roster can (the
    union: ``magi.core.seats.runners``)."""
    staged = inputs.get("command", "compete") == "compete"
    labels = first_stage(config) if staged else job_labels(config)
    return {**inputs, "runner-labels": json.dumps(labels)}


def claim_ref(number: int) -> str:
    """The ref that says issue ``number`` has its competition (created once, atomically)."""
    return f"refs/magi/claims/issue-{number}"


def said_ref(number: int, key: str) -> str:
    """The ref that records "this reply was said" on thread ``number``."""
    return f"refs/magi/said/{number}/{re.sub(r'[^A-Za-z0-9._-]', '-', key)}"


async def reply_once(
    seal: Seal, gh: GitHubPort, repo: Repo, number: int, key: str, body: str, sha: str
) -> bool:
    """Comment ``body`` unless magi already said ``key`` on this thread; True if posted.

    Saying it is claimed first by creating ``said_ref`` (at ``sha``, any commit that exists):
    creating a ref is atomic on GitHub's side, so of several deliveries racing to say the
    same thing (a check_run, its check_suite and its workflow_run arrive together) one wins.
    A reply that fails to post gives its claim back, so a later event can say it.
    """
    if not await gh.create_ref(repo, said_ref(number, key), sha):
        return False
    try:
        await gh.create_comment(
            repo, number, f"{body}\n\n{seal.marker(markers.REFUSAL, key=_marker_value(key))}"
        )
    except GitHubError:
        await gh.delete_ref(repo, said_ref(number, key))
        raise
    return True


def own_bodies(app_login: str, comments: list[Comment]) -> list[str]:
    """The bodies of the comments the App ``app_login`` (its slug, with or without
    ``[bot]``) wrote: its bot user, ``<slug>[bot]`` of type Bot. A person can register the
    slug itself as a login; a ``[bot]`` login is GitHub's to give."""
    bot = app_login.lower().removesuffix("[bot]") + "[bot]"
    return [
        c.body
        for c in comments
        if c.user is not None and c.user.type == "Bot" and c.user.login.lower() == bot
    ]


def refs_under(refs: list[GitRef], prefix: str) -> tuple[list[GitRef], list[GitRef]]:
    """``refs`` split into those under ``refs/<prefix>`` (a ``/``-ended prefix inside magi's
    own namespaces) and the rest, which a matching-refs answer should never hold."""
    want = f"refs/{prefix}"
    if not want.endswith("/") or not want.startswith(_OURS) or "//" in want or "/../" in want:
        return [], list(refs)
    ok = [r for r in refs if r.ref.startswith(want) and "/../" not in r.ref]
    return ok, [r for r in refs if r not in ok]


async def delete_under(gh: GitHubPort, repo: Repo, prefix: str) -> tuple[list[str], list[str]]:
    """Delete every ref GitHub lists under ``refs/<prefix>``; (deleted, refused).

    GitHub answers ``matching-refs`` by prefix, but a destructive call checks what it
    destroys: a ref outside the prefix (a misbehaving API or proxy answering with, say,
    ``refs/heads/feature-a``) is logged and left alone, and a prefix outside magi's own
    namespaces deletes nothing. A ref already gone counts as deleted."""
    ok, stray = refs_under(await gh.matching_refs(repo, prefix), prefix)
    for ref in stray:
        _log.warning(
            "not deleted: outside the prefix asked for",
            extra={"repo": repo.full_name, "step": "delete", "outcome": ref.ref},
        )
    done = []
    for ref in ok:
        await gh.delete_ref(repo, ref.ref.removeprefix("refs/"))
        done.append(ref.ref)
    return done, [r.ref for r in stray]


def _marker_value(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9._/:#-]", "-", key)


async def repo_config(gh: GitHubPort, repo: Repo, default_branch: str) -> Config:
    """The repository's config layers from the default branch only, as the CLI merges them
    (``.magi/config.toml`` below ``magi.toml``); none -> defaults.

    Raises ``ConfigError`` (magi's own, with file, line and key) when a layer is invalid.
    Never read from a PR or candidate branch: a candidate must not configure its own gate.
    """
    layers = []
    for path in REPO_LAYERS:
        content = await gh.get_content(repo, path, default_branch)
        if content is not None:
            layers.append((path, content.text))
    if not layers:
        return Config()
    return load_repo_texts(layers).config
