"""``magi action rebase --pr N``: a magi PR onto its base as the remote has it now. No agent.

It runs in the publish job (the App token; nothing else runs there). The PR's branch and
base are fetched fresh, the branch is rebased in a throw-away worktree, and the result is
pushed with ``--force-with-lease`` against the head this job read: if anyone pushed in
between, the push is refused and nothing is overwritten. A rebase that does not apply
pushes nothing: the first time on a head it is handed to the fixer (said on the PR; the
job ends with the conflict's exit code, which gives the head's lock back, and the App
dispatches a fix round with the base merged in, ``magi.action.agents_job.land_conflict``);
after that, git's conflicting paths are posted and ``magi:conflict`` labeled (a person).
A pending approval is carried only when ``git patch-id --stable`` of the PR's diff is the
same before and after (``magi.core.threads.landing.approval_across``): the kept
approval is re-pinned to the new head in a new marker, posted before the push, so the
App's ``synchronize`` handling already sees it.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from magi.action.bundle import INCOMING
from magi.action.env import ActionEnv
from magi.core.threads import markers
from magi.core.threads.conflict import for_a_person
from magi.core.threads.landing import CONFLICT, approval_across
from magi.core.threads.posting import Policy, code, gate
from magi.git.remote import Remote
from magi.git.repo import NEUTRAL_EMAIL, NEUTRAL_NAME, Git
from magi.github.models import Comment
from magi.github.port import GitHubPort

__all__ = ["Rebased", "patch_id", "rebase"]


@dataclass(frozen=True)
class Rebased:
    """What the rebase did: ``outcome`` is rebased | up-to-date | to-fixer | conflict."""

    outcome: str
    head: str
    new_head: str = ""
    base: str = ""
    paths: tuple[str, ...] = ()
    approval_kept: bool | None = None


def patch_id(git: Git, base: str, head: str) -> str:
    """``git patch-id --stable`` of the diff ``base..head`` ('' for an empty diff)."""
    diff = git.run("diff", "--no-color", "--no-ext-diff", base, head)
    if not diff.strip():
        return ""
    out = git.run("patch-id", "--stable", input=diff).split()
    return out[0] if out else ""


def _ours(env: ActionEnv, c: Comment) -> bool:
    return env.ours(c)


def _try_rebase(git: Git, head: str, base: str) -> tuple[str, tuple[str, ...], str]:
    """(new head, conflicting paths, what git said) from rebasing ``head`` onto ``base``."""
    with tempfile.TemporaryDirectory(prefix="magi-rebase-") as tmp:
        where = Path(tmp) / "wt"
        git.run("worktree", "add", "--detach", str(where), head)
        try:
            ident = ["-c", f"user.name={NEUTRAL_NAME}", "-c", f"user.email={NEUTRAL_EMAIL}"]
            res = git._exec([*ident, "rebase", base], cwd=where, check=False)
            if res.returncode == 0:
                return git.run("rev-parse", "HEAD", cwd=where).strip(), (), ""
            said = (res.stdout + res.stderr).decode("utf-8", "replace").strip()
            paths = git.run("diff", "--name-only", "--diff-filter=U", cwd=where).split()
            git._exec(["rebase", "--abort"], cwd=where, check=False)
            return "", tuple(paths), said
        finally:
            git.run("worktree", "remove", "--force", str(where), check=False)


async def _conflicted(
    port: GitHubPort,
    env: ActionEnv,
    pr: int,
    base_ref: str,
    head: str,
    base: str,
    paths: tuple[str, ...],
    said: str,
) -> Rebased:
    """Nothing pushed. The fixer gets this head's conflict once (the App dispatches a fix
    round with the base merged in when this job's failure gives the head's lock back); a
    second conflict on the head, or one the fixer already had, is labeled for a person."""
    own = [c.body for c in await port.list_comments(env.repo, pr) if _ours(env, c)]
    handed = env.seal.find(own, "land", step="conflict", sha=head) or env.seal.find(
        own, "land", step="fix", sha=head, conflict="1"
    )
    if not handed:
        listed = ", ".join(code(p, 300) for p in paths[:20]) or "(git named no path)"
        text = (
            f"magi could not rebase this pull request onto `{base_ref}` (`{base[:12]}`): "
            f"the changes conflict in {listed}. The fixer that wrote them gets the conflict "
            "once, in a fix round with the base merged in; e2e and the gate run again on its "
            "resolution, and only if it fails is a person asked."
        )
        mark = env.seal.marker("land", step="conflict", sha=head, base=base, to="fixer")
        await port.create_comment(env.repo, pr, gate(text, Policy()).text + "\n\n" + mark)
        return Rebased("to-fixer", head, "", base, paths)
    why = "the fixer already had this head's conflict"
    text = for_a_person(base_ref, base, paths, said, why)
    body = gate(text, Policy()).text + "\n" + env.seal.marker("land", step="conflict", sha=head)
    await port.create_comment(env.repo, pr, body)
    await port.add_labels(env.repo, pr, [CONFLICT])
    return Rebased("conflict", head, "", base, paths)


async def rebase(*, port: GitHubPort, env: ActionEnv, git: Git, remote: Remote, pr: int) -> Rebased:
    """Rebase PR ``pr`` onto its base; see the module docstring."""
    pull = await port.get_pull(env.repo, pr)
    branch, base_ref = pull.head.ref, pull.base.ref
    head = remote.fetch(f"refs/heads/{branch}", f"{INCOMING}/land/{pr}/head")
    base = remote.fetch(f"refs/heads/{base_ref}", f"{INCOMING}/land/{pr}/base")
    if head is None or base is None:
        raise_missing = branch if head is None else base_ref
        from magi.errors import ActionError

        raise ActionError(f"{raise_missing} is not on the remote: nothing to rebase")
    if git._ok("merge-base", "--is-ancestor", base, head):
        return Rebased("up-to-date", head, head, base)
    old_base = git.run("merge-base", head, base).strip()
    before = patch_id(git, old_base, head)
    new, paths, said = _try_rebase(git, head, base)
    if not new:
        return await _conflicted(port, env, pr, base_ref, head, base, paths, said)
    after = patch_id(git, base, new)
    own = [c.body for c in await port.list_comments(env.repo, pr) if _ours(env, c)]
    approval = env.seal.latest(own, markers.APPROVAL)
    kept: bool | None = None
    if approval is not None and approval.get("sha") == head:
        carried = approval_across(head, new, before, after, base)
        kept = carried.kept
        tail = ""
        if carried.kept:
            who = {k: approval[k] for k in ("login", "uid") if approval.get(k)}
            tail = "\n\n" + env.seal.marker(
                markers.APPROVAL, comment=approval.get("comment", ""), sha=new, **who
            )
        # Said before the push: the App's synchronize handling then finds the re-pinned
        # approval (or this refusal) already there.
        await port.create_comment(env.repo, pr, carried.message + tail)
    else:
        await port.create_comment(env.repo, pr, f"Rebased onto `{base[:12]}`.")
    remote.push(new, f"refs/heads/{branch}", expect=head)
    return Rebased("rebased", head, new, base, approval_kept=kept)
