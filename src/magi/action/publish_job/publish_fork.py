"""Publishing a fork's seat job: its sealed result beside the record, and, from the seat
job that completes the fork, the join's dispatch.

A forked wave's seat jobs run side by side (``magi.action.agents_job.fork``); each one's
publish adds ``fork/<labels>.sealed`` to ``refs/magi/runs/<id>`` and touches nothing else:
not the record (the join writes that), not the issue. Two of them may push at the same
moment: each push is a compare-and-swap on the ref (``--force-with-lease``), and a lost
race reads the ref again and adds its file to what won. The push whose tree holds every
label set of the fork is the one that dispatches the join, so exactly one does.
"""

from __future__ import annotations

import json

from magi.action.agents_job.fork import slug
from magi.action.artifact import Artifact
from magi.action.bundle import INCOMING
from magi.action.env import ActionEnv
from magi.action.publish_job.record_ref import fork_id_of, record_ref
from magi.core.seats.runners import first_stage
from magi.errors import ActionError, LeaseRejected, TamperedArtifact
from magi.git.remote import Remote
from magi.git.repo import NEUTRAL_EMAIL, NEUTRAL_NAME, Git
from magi.github.port import GitHubPort
from magi.model.config import Config
from magi.model.run import Run

__all__ = ["publish_fork"]

FORK_DIR = "fork"  # in the record ref's tree
JOINED = "joined"  # fork/joined: the join was dispatched
ATTEMPTS = 5


def _with_file(git: Git, parent: str, name: str, text: str, message: str) -> str:
    """``parent``'s tree with ``fork/<name>`` set to ``text``, as a commit on it."""
    blob = git.run("hash-object", "-w", "--stdin", input=text).strip()
    entries = [
        line
        for line in git.run("ls-tree", parent).splitlines()
        if line.rsplit("\t", 1)[-1] != FORK_DIR
    ]
    forks = [
        line
        for line in git.run("ls-tree", f"{parent}:{FORK_DIR}", check=False).splitlines()
        if line and line.rsplit("\t", 1)[-1] != name
    ]
    sub = git.run("mktree", input="\n".join([*forks, f"100644 blob {blob}\t{name}"]) + "\n")
    entries.append(f"040000 tree {sub.strip()}\t{FORK_DIR}")
    tree = git.run("mktree", input="\n".join(entries) + "\n").strip()
    ident = ("-c", f"user.name={NEUTRAL_NAME}", "-c", f"user.email={NEUTRAL_EMAIL}")
    return git.run(*ident, "commit-tree", tree, "-p", parent, "-m", message).strip()


def _wanted(git: Git, commit: str) -> list[list[str]]:
    """The fork's label sets, as the record at ``commit`` names them."""
    text = git.run("cat-file", "blob", f"{commit}:run.json", check=False)
    try:
        fork = json.loads(text).get("fork") or []
    except (ValueError, AttributeError):
        fork = []
    return [list(labels) for labels in fork if isinstance(labels, list)]


def _present(git: Git, commit: str) -> set[str]:
    listing = git.run("ls-tree", "--name-only", f"{commit}:{FORK_DIR}", check=False)
    return {n.removesuffix(".sealed") for n in listing.splitlines() if n.endswith(".sealed")}


def _has(git: Git, commit: str, name: str) -> str | None:
    out = git._exec(["cat-file", "blob", f"{commit}:{FORK_DIR}/{name}"], check=False)
    return out.stdout.decode("ascii", "replace") if out.returncode == 0 else None


async def publish_fork(
    *,
    port: GitHubPort,
    env: ActionEnv,
    git: Git,
    remote: Remote,
    artifact: Artifact,
    sealed: str,
    issue: int,
    trusted: Config,
) -> str:
    """Store one seat job's result; what became of it, in words (the join dispatched,
    stored, or nothing stored and why).

    Idempotent under re-runs: a result is stored once per state (a re-run's, sealed anew,
    replaces it until the join is sent); the join is sent by the publish that finds the
    set complete and no ``fork/joined`` mark, and the mark is written after it, so a
    dispatch that failed is sent by the re-run, and a sent one is not sent again."""
    run = artifact.run
    labels = list(artifact.manifest.fork)
    ref = record_ref(run.id)
    name = f"{slug(labels)}.sealed"
    for _ in range(ATTEMPTS):
        prev = remote.fetch(ref, f"{INCOMING}/{run.id}/record")
        if prev is None:
            raise TamperedArtifact(f"{ref} does not exist: the fork has no record to join")
        wanted = _wanted(git, prev)
        if labels not in wanted:
            raise TamperedArtifact(
                f"the record's wave has no seat job for {', '.join(labels)} (it was joined "
                "already, or forked otherwise since): nothing is stored"
            )
        if _has(git, prev, JOINED) is not None:
            env.summary(f"magi run {run.id}: its forked wave was joined already.")
            return "its wave was joined already: nothing is stored"
        if fork_id_of(git, prev) != run.fork_id:
            said = "an earlier fork's result (the run has forked again since): nothing is stored"
            env.summary(f"magi run {run.id}: the seat job's result is {said}.")
            return said
        head = prev
        if _has(git, prev, name) != sealed:
            head = _with_file(git, prev, name, sealed, f"magi run {run.id}: {slug(labels)}")
            try:
                remote.push(head, ref, expect=prev)
            except LeaseRejected:
                continue  # another seat job pushed first: add this one to what it pushed
        if not {slug(w) for w in wanted} <= _present(git, head):
            env.summary(f"magi run {run.id}: the seats of {', '.join(labels)} are stored.")
            return "stored"
        await _dispatch_join(port, env, run, issue, trusted)
        _mark_joined(git, remote, ref, run.id)
        return "the wave is whole: its join is dispatched"
    raise ActionError(f"{ref} kept moving under this publish ({ATTEMPTS} tries): re-run it")


async def _dispatch_join(
    port: GitHubPort, env: ActionEnv, run: Run, issue: int, trusted: Config
) -> None:
    """The join, on the pool's labels, in the repository's workflow (its config, not the
    artifact's: the agents job wrote that)."""
    if not env.ref_name:
        raise ActionError("GITHUB_REF_NAME is not set: publish cannot dispatch the join")
    inputs = {"issue": str(issue), "run_id": run.id, "command": "compete"}
    inputs["runner-labels"] = json.dumps(first_stage(trusted))
    inputs.update(env.park_input(run.id))  # a `/magi stop` parks the join and what follows
    await port.dispatch_workflow(env.repo, trusted.github.workflow, env.ref_name, inputs)
    env.summary(f"magi run {run.id}: the forked wave is whole; its join is dispatched.")


def _mark_joined(git: Git, remote: Remote, ref: str, run_id: str) -> None:
    """``fork/joined``, after the join's dispatch: no later publish sends it again."""
    for _ in range(ATTEMPTS):
        prev = remote.fetch(ref, f"{INCOMING}/{run_id}/record")
        if prev is None or _has(git, prev, JOINED) is not None:
            return
        mark = _with_file(git, prev, JOINED, run_id + "\n", f"magi run {run_id}: joined")
        try:
            remote.push(mark, ref, expect=prev)
            return
        except LeaseRejected:
            continue
    raise ActionError(f"{ref} kept moving: the join is sent, its mark is not (re-run publish)")
