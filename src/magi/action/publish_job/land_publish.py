"""``magi action publish-land --pr N``: a fix round's artifact onto GitHub, with a lease.

The round's commits arrive as a bundle; they are checked (they must descend from the head
the job read, and end at the head ``round.json`` names) and pushed to the PR's branch with
``--force-with-lease=refs/heads/<branch>:<the head the job read>``: a push by anyone in
between refuses it. The round (its input, commit and results) is recorded beside the run
in ``refs/magi/runs/<id>`` as ``artifacts/land-round-<n>.json``. A round that changed
nothing ends landing: label ``magi:blocked`` and say so, never the same round again.
A round that began with the base conflicting (the App's sealed dispatch marker says so) is
pushed only resolved (``land_checks``: git's merge recomputed here, no marker left, nothing
outside the conflict changed, ``.github/`` as the base tip has it, e2e and the gate green);
otherwise ``magi:conflict`` asks a person, as a rebase's conflict did before the fixer was
asked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from magi.action.agents_job.land import BUNDLE, OUT_REF, ROUND, LandRound, add_round
from magi.action.agents_job.land_conflict import conflicting
from magi.action.bundle import INCOMING
from magi.action.env import ActionEnv
from magi.action.publish_job.land_checks import (
    base_workflows,
    brought_base,
    check_conflict,
    why_not,
)
from magi.action.publish_job.record_ref import build_commit, read_published, record_ref
from magi.action.publish_job.trusted import default_branch
from magi.action.publish_job.workflow_guard import workflow_changes
from magi.core.threads import markers
from magi.core.threads.conflict import MergeTree, for_a_person
from magi.core.threads.landing import BLOCKED, CONFLICT
from magi.core.threads.posting import Policy, code, gate, gate_json
from magi.errors import RepoError, StateError, TamperedArtifact
from magi.git.remote import Remote
from magi.git.repo import Git
from magi.github.models import PullRequest
from magi.github.port import GitHubPort
from magi.model.landing import LandConflict
from magi.model.run import Run
from magi.state.migrations import migrate

__all__ = ["LandPublished", "publish_land", "read_round"]


@dataclass(frozen=True)
class LandPublished:
    outcome: str  # pushed | blocked | conflict
    head: str


def read_round(where: Path, pr: int) -> LandRound:
    try:
        done = LandRound.model_validate_json((where / ROUND).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise TamperedArtifact(f"the landing round cannot be read: {e}") from None
    if done.pr != pr or done.input.pr != pr:
        raise TamperedArtifact(f"the landing round is not for PR #{pr}")
    if done.conflict is not None:
        check_conflict(done.conflict)
    return done


def _fetch_bundle(git: Git, where: Path, done: LandRound) -> None:
    bundle = where / BUNDLE
    if not bundle.is_file():
        raise TamperedArtifact("the round changed the tree but its bundle is missing")
    into = f"{INCOMING}/land/{done.pr}/round"
    git.run("fetch", "--quiet", "--no-tags", str(bundle), f"+{OUT_REF}:{into}")
    got = git.run("rev-parse", "--verify", into).strip()
    if got != done.new_head:
        raise TamperedArtifact(f"the bundle ends at {got[:12]}, not {done.new_head[:12]}")
    ok = git._exec(["merge-base", "--is-ancestor", done.head, got], check=False)
    if ok.returncode != 0:
        raise TamperedArtifact("the round does not descend from the head it read")


def _record(
    git: Git, remote: Remote, done: LandRound, *, blocked: str | None = None, ended: str = "blocked"
) -> tuple[str, str] | None:
    """The record commit that adds the round (and its parent), made before anything is
    pushed: a record this magi cannot read stops publish before the branch moves."""
    ref = record_ref(done.run)
    prev = remote.fetch(ref, f"{INCOMING}/{done.run}/record")
    if prev is None:
        return None  # no record to add to (published by an older magi): the PR says it all
    run = _read_run(git, prev, ref)
    add_round(run, done.pr, done.record())
    if blocked is not None and run.landing is not None:
        run.landing.outcome = "conflict" if ended == "conflict" else "blocked"
        run.landing.reason = blocked
    names = git.run("ls-tree", "--name-only", f"{prev}:artifacts", check=False).split()
    files = {n: git.run("cat-file", "blob", f"{prev}:artifacts/{n}") for n in names}
    # Each string gated, not the JSON text: a path's redaction must not eat a quote (an e2e
    # traceback names files in quotes, and the record then did not parse).
    run_json = json.dumps(gate_json(run.model_dump(mode="json", by_alias=True), Policy()), indent=2)
    commit = build_commit(
        git,
        run_json=run_json + "\n",
        artifacts=files,
        published=read_published(git, prev),
        parent=prev,
        message=f"magi run {done.run}: landing round {done.round}",
    )
    return None if commit is None else (commit, prev)


def _read_run(git: Git, prev: str, ref: str) -> Run:
    """The run record at ``prev`` on ``ref``; one this magi cannot read is refused whole,
    with the ref named, before anything is pushed."""
    try:
        return Run.model_validate(
            migrate(json.loads(git.run("cat-file", "blob", f"{prev}:run.json")))
        )
    except (RepoError, ValueError, KeyError, TypeError, StateError) as exc:
        # ValueError covers JSONDecodeError and pydantic's ValidationError
        raise TamperedArtifact(
            f"the run record on {ref} is unreadable ({type(exc).__name__}); "
            "landing stops before the branch moves: check or delete that ref"
        ) from None


def _allows_workflows(git: Git, remote: Remote) -> bool:
    """``[github] workflow_changes`` as the default branch holds it now (``trusted``): never
    the run record's, which publish copied from an artifact the agents job wrote."""
    return default_branch(git, remote).config.github.workflow_changes


def _push_record(remote: Remote, done: LandRound, made: tuple[str, str] | None) -> None:
    if made is not None:
        remote.push(made[0], record_ref(done.run), expect=made[1])


async def _blocked(
    port: GitHubPort,
    env: ActionEnv,
    git: Git,
    remote: Remote,
    done: LandRound,
    text: str,
    why: str,
    label: str = BLOCKED,
) -> LandPublished:
    """Landing stops at this round: recorded, said on the PR, labeled; the branch stays."""
    step = "conflict" if label == CONFLICT else "blocked"
    mark = env.seal.marker("land", step=step, sha=done.head)
    made = _record(git, remote, done, blocked=why, ended=step)
    await port.create_comment(env.repo, done.pr, gate(text, Policy()).text + "\n\n" + mark)
    await port.add_labels(env.repo, done.pr, [label])
    _push_record(remote, done, made)
    return LandPublished(step, done.head)


async def publish_land(
    *, port: GitHubPort, env: ActionEnv, git: Git, remote: Remote, where: Path, pr: int
) -> LandPublished:
    """Push the round with a lease, record it, and say what it did on the PR."""
    done = read_round(where, pr)
    pull = await port.get_pull(env.repo, pr)
    if done.conflict is not None:
        own = [c.body for c in await port.list_comments(env.repo, pr) if env.ours(c)]
        sent = env.seal.find(own, "land", step="fix", sha=done.head, round=str(done.round))
        if not any(m.get("conflict") == "1" for m in sent):
            raise TamperedArtifact(
                f"round.json names a `conflict`, but the App dispatched round {done.round} "
                f"on {done.head[:12]} as no conflict round (no sealed `conflict=1` marker)"
            )
        return await _publish_resolution(port, env, git, remote, where, done, pull, done.conflict)
    if not done.changed:
        status = done.fix.status if done.fix else "pending"
        why = "" if status == "ok" else f" (the fixer's turn ended `{status}`)"
        text = (
            f"Landing fix round {done.round} changed nothing{why}, so landing stops here "
            f"instead of asking again; labeled `{BLOCKED}`. A person decides: fix it by hand, "
            "or remove the label to let magi try once more."
        )
        return await _blocked(
            port, env, git, remote, done, text, f"fix round {done.round} changed nothing{why}"
        )
    _fetch_bundle(git, where, done)
    changed = workflow_changes(git, done.head, done.new_head) or _merged_workflows(
        git, remote, done, pull
    )
    if changed and not _allows_workflows(git, remote):
        text = (
            f"Landing fix round {done.round} changes {', '.join(code(f) for f in changed[:5])}; "
            "magi does not push workflow changes an agent made (`[github] workflow_changes = "
            f"false`: a workflow runs with this repository's secrets). Labeled `{BLOCKED}`: "
            "a person decides."
        )
        return await _blocked(
            port, env, git, remote, done, text, f"fix round {done.round} changed workflows"
        )
    made = _record(git, remote, done)
    remote.push(done.new_head, f"refs/heads/{pull.head.ref}", expect=done.head)
    _push_record(remote, done, made)
    text = f"Landing fix round {done.round} pushed `{done.new_head[:12]}` ({done.verdict()})."
    body = (
        gate(text, Policy()).text
        + "\n\n"
        + env.seal.marker("land", step="pushed", round=done.round, sha=done.new_head)
    )
    await port.create_comment(env.repo, pr, body)
    return LandPublished("pushed", done.new_head)


def _merged_workflows(git: Git, remote: Remote, done: LandRound, pull: PullRequest) -> list[str]:
    """An ordinary round whose fixer merged the base itself: ``.github/`` against the base
    tip (``land_checks``), else nothing to add to head-to-new-head."""
    tip = remote.fetch(f"refs/heads/{pull.base.ref}", f"{INCOMING}/land/{done.pr}/base")
    if tip is None or not brought_base(git, done.head, done.new_head, tip):
        return []
    return base_workflows(git, done.new_head, tip)


async def _publish_resolution(
    port: GitHubPort,
    env: ActionEnv,
    git: Git,
    remote: Remote,
    where: Path,
    done: LandRound,
    pull: PullRequest,
    conflict: LandConflict,
) -> LandPublished:
    """A conflict round: pushed only when the conflict is resolved (``land_checks.why_not``
    against git's merge recomputed here, never the round's words) and e2e and the gate pass
    on it; else nothing moves and ``magi:conflict`` asks a person. A pushed resolution is new code:
    a standing approval is said void (its patch id cannot match) and asked again."""
    failed = "" if done.changed else "the fixer changed nothing"
    paths = list(conflict.paths)
    if done.changed:
        _fetch_bundle(git, where, done)
        merged, tip = _merged(git, remote, done, pull, conflict)
        paths = list(merged.paths)
        workflows = base_workflows(git, done.new_head, tip)
        if workflows and _allows_workflows(git, remote):
            workflows = []
        failed = why_not(git, done, merged, workflows)
    if failed:
        text = for_a_person(pull.base.ref, conflict.base, paths, conflict.said, failed)
        return await _blocked(port, env, git, remote, done, text, failed, CONFLICT)
    made = _record(git, remote, done)
    remote.push(done.new_head, f"refs/heads/{pull.head.ref}", expect=done.head)
    _push_record(remote, done, made)
    own = [c.body for c in await port.list_comments(env.repo, done.pr) if env.ours(c)]
    approval = env.seal.latest(own, markers.APPROVAL)
    text = (
        f"Landing fix round {done.round}: the fixer resolved the conflict with `{pull.base.ref}` "
        f"(`{conflict.base[:12]}`) and magi pushed `{done.new_head[:12]}` ({done.verdict()})."
    )
    if approval is not None and approval.get("sha") == done.head:
        text += (
            f"\n\nThis is new code: the approval of `{done.head[:12]}` does not carry over "
            "(a resolution changes the patch, so its `git patch-id` cannot match). Read the "
            "resolution, then comment `merge` again."
        )
    mark = env.seal.marker("land", step="pushed", round=done.round, sha=done.new_head)
    await port.create_comment(env.repo, done.pr, gate(text, Policy()).text + "\n\n" + mark)
    return LandPublished("pushed", done.new_head)


def _merged(
    git: Git, remote: Remote, done: LandRound, pull: PullRequest, conflict: LandConflict
) -> tuple[MergeTree, str]:
    """git's own merge of the head and ``conflict.base``, recomputed, and the base tip as
    fetched now: the base must be on the base branch, and must conflict with the head (else
    the round's ``conflict`` is not what git says, and nothing is pushed)."""
    tip = remote.fetch(f"refs/heads/{pull.base.ref}", f"{INCOMING}/land/{done.pr}/base")
    if tip is None or not git._ok("merge-base", "--is-ancestor", conflict.base, tip):
        raise TamperedArtifact(
            f"round.json's conflict.base {conflict.base[:12]} is not on {pull.base.ref}"
        )
    merged = conflicting(git, done.head, conflict.base)
    if merged is None:
        raise TamperedArtifact(
            f"round.json's conflict.base {conflict.base[:12]} does not conflict with "
            f"{done.head[:12]}: git merges them cleanly (or the head already holds it)"
        )
    return merged, tip
