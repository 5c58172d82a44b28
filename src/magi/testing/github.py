"""A stateful, recording fake of the GitHub port, for the App's and the Action's tests.

``FakeGitHub`` holds one small world per repository (issues, comments, refs, pull requests,
checks, statuses, workflow runs, collaborator permissions) and implements every method of
``magi.github.port.GitHubPort`` against it, recording each call in ``calls``. Failures are
injected per method with ``fail(name, error, times=1)``. Each call yields to the event loop
once before it acts, so concurrent callers really interleave (as they would over HTTP), and
``create_ref`` keeps GitHub's atomicity: of two creators of one ref exactly one wins.
Git objects (blobs, trees, commits of the Git Data API) are kept by their real git sha,
and ``update_ref(force=False)`` refuses what is not a fast forward, as GitHub does (422).
Every change of a branch, however it is made (a port call, ``push``, a test writing
``refs`` directly), is logged at the fake's ``now`` the way GitHub's activity API shows it
(``list_activities``): the merge gate's clock is that log, never a committer date.

The HTTP double that the githubkit adapter is tested against is ``magi.testing.github_http``.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import re
import subprocess
import zlib
from collections import UserDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from importlib.resources import files
from pathlib import Path
from typing import Any

from magi.core.threads.progress import RunTitle, title
from magi.github.models import (
    Activity,
    Blob,
    Branch,
    BranchRepo,
    BranchRule,
    CheckApp,
    CheckRun,
    CombinedStatus,
    Comment,
    Commit,
    Content,
    Dispatch,
    GitCommit,
    GitRef,
    GitTree,
    Issue,
    JobStep,
    Label,
    MergeResult,
    Permission,
    PullRequest,
    PullReview,
    Repo,
    StatusContext,
    TreeEntry,
    User,
    WorkflowJob,
    WorkflowRun,
)
from magi.github.port import GitHubError
from magi.testing.github_rules import BranchRules, Reviewed, as_ruleset, refusal

APP_LOGIN = "magi-app[bot]"
# pull_request dequeued's ``reason``, as GitHub's webhook description lists them.
# https://docs.github.com/en/webhooks/webhook-events-and-payloads#pull_request
DEQUEUE_REASONS = frozenset(
    {
        "UNKNOWN_REMOVAL_REASON",
        "MANUAL",
        "MERGE",
        "MERGE_CONFLICT",
        "CI_FAILURE",
        "CI_TIMEOUT",
        "ALREADY_MERGED",
        "QUEUE_CLEARED",
        "ROLL_BACK",
        "BRANCH_PROTECTIONS",
        "GIT_TREE_INVALID",
        "INVALID_MERGE_COMMIT",
    }
)


@dataclass(frozen=True)
class Call:
    """One recorded port call."""

    name: str
    repo: str
    args: Mapping[str, Any]


NO_SHA = "0" * 40


class RefLog(UserDict[str, str]):
    """A repository's refs (``heads/main`` -> sha) that log each branch change with its time.

    A ``UserDict``: ``update``, ``setdefault`` and ``pop`` all go through the two methods
    below, so no way of writing a ref skips the log.
    """

    def __init__(
        self, refs: Mapping[str, str] | None = None, clock: Callable[[], datetime] | None = None
    ) -> None:
        super().__init__()
        self.clock = clock or (lambda: datetime(2026, 1, 1, tzinfo=UTC))
        self.activity: list[Activity] = []
        self.data.update(refs or {})  # what the repository already had: no change to log

    def _log(self, key: str, old: str | None, new: str | None) -> None:
        if not key.startswith("heads/") or old == new:
            return
        kind = "branch_creation" if old is None else "branch_deletion" if new is None else "push"
        self.activity.append(
            Activity(
                ref=f"refs/{key}",
                before=old or NO_SHA,
                after=new or NO_SHA,
                timestamp=self.clock(),
                activity_type=kind,
            )
        )

    def __setitem__(self, key: str, sha: str) -> None:
        old = self.data.get(key)
        self.data[key] = sha
        self._log(key, old, sha)

    def __delitem__(self, key: str) -> None:
        old = self.data.pop(key)
        self._log(key, old, None)


def _declared_inputs() -> frozenset[str]:
    """The ``workflow_dispatch`` inputs magi's workflow template declares."""
    text = (files("magi") / "templates" / "workflow.yml").read_text(encoding="utf-8")
    block = text.split("  workflow_dispatch:\n    inputs:\n", 1)[1]
    names: set[str] = set()
    for line in block.splitlines():
        if line.strip() and not line.startswith("      "):
            break
        if m := re.fullmatch(r"      ([A-Za-z0-9_-]+):", line):
            names.add(m[1])
    return frozenset(names)


_DECLARED = _declared_inputs()


@dataclass
class World:
    """One repository's state."""

    default_branch: str = "main"
    files: dict[tuple[str, str], str] = field(default_factory=dict)  # (ref, path) -> text
    refs: RefLog = field(default_factory=RefLog)  # "heads/main" -> sha, changes logged
    commits: dict[str, datetime] = field(default_factory=dict)
    issues: dict[int, Issue] = field(default_factory=dict)
    comments: dict[int, list[Comment]] = field(default_factory=dict)
    installed: bool = True  # the App is installed on this repository
    # Who may see it and the owner's plan: GitHub has no draft PRs in a private repository
    # on the Free and Pro plans (``drafts_refused``).
    visibility: str = "public"  # public | private | internal
    plan: str = "free"  # free | pro | team | enterprise
    # what that installation granted (None: GitHub's example) and whether it is suspended
    granted: dict[str, str] | None = None
    suspended: bool = False
    reactions: list[tuple[str, int, str]] = field(default_factory=list)
    permissions: dict[str, str] = field(default_factory=dict)
    pulls: dict[int, PullRequest] = field(default_factory=dict)
    checks: dict[str, list[CheckRun]] = field(default_factory=dict)
    statuses: dict[str, list[StatusContext]] = field(default_factory=dict)
    workflows: set[str] = field(default_factory=lambda: {"magi.yml"})
    # The inputs each workflow declares (default: magi's own workflow's, read from its
    # template): GitHub refuses a dispatch with any other, "Unexpected inputs provided".
    declared: dict[str, frozenset[str]] = field(default_factory=lambda: {"magi.yml": _DECLARED})
    runs: dict[int, WorkflowRun] = field(default_factory=dict)
    dispatches: list[dict[str, Any]] = field(default_factory=list)
    merges: list[dict[str, Any]] = field(default_factory=list)
    # PR number -> the commit its merge made on the base (GraphQL's mergeCommit; REST
    # 2026-03-10 has no merge_commit_sha). A test merging a PR by hand sets it here.
    merge_commits: dict[int, str] = field(default_factory=dict)
    # git objects by sha: bytes (a blob), a list of TreeEntry (a tree), or a GitCommit
    objects: dict[str, bytes | list[TreeEntry] | GitCommit] = field(default_factory=dict)
    jobs: dict[int, list[WorkflowJob]] = field(default_factory=dict)  # run id -> its jobs
    job_logs: dict[int, str] = field(default_factory=dict)  # Actions job id -> its log
    rules: dict[str, BranchRules] = field(default_factory=dict)  # branch -> its rules
    reviews: dict[int, list[Reviewed]] = field(default_factory=dict)  # PR -> reviews, in order
    reruns: list[int] = field(default_factory=list)  # Actions runs whose failed jobs re-ran
    queue: list[tuple[int, str]] = field(default_factory=list)  # merge queue: (PR, group sha)


def branch_repo(full_name: str) -> BranchRepo:
    """A repository as a PR's head or base names it (its id stable per name)."""
    return BranchRepo(id=zlib.crc32(full_name.lower().encode()), full_name=full_name)


def _branch_heads(w: World) -> set[str]:
    return {sha for ref, sha in w.refs.items() if ref.startswith("heads/")}


# "Draft pull requests are available in public repositories with GitHub Free and GitHub Free
# for organizations, GitHub Pro, and legacy per-repository billing plans, and in public and
# private repositories with GitHub Team and GitHub Enterprise Cloud" (pulls/create in the REST
# description); elsewhere a draft is refused with 422 and these words (the body is shown in
# SWE-agent/SWE-agent#179). https://docs.github.com/en/rest/pulls/pulls#create-a-pull-request
# https://docs.github.com/en/pull-requests/collaborating-with-pull-requests/proposing-changes-to-your-work-with-pull-requests/changing-the-stage-of-a-pull-request
DRAFTS_REFUSED = "Draft pull requests are not supported in this repository."


def drafts_refused(w: World) -> bool:
    """Whether GitHub refuses a draft PR in this repository (private, on Free or Pro)."""
    return w.visibility != "public" and w.plan in {"free", "pro"}


CANCEL_FINISHED = "Cannot cancel a workflow run that is completed."
COMMENT_LIMIT = 65_536  # GitHub's own: 422 "Body is too long (maximum is 65536 characters)"


def _fits(body: str) -> None:
    if len(body) > COMMENT_LIMIT:
        raise GitHubError(
            f"Validation Failed: body is too long (maximum is {COMMENT_LIMIT} characters)",
            status=422,
        )


# checks/create and checks/update: output.summary "Maximum length: 65535 characters".
# https://docs.github.com/en/rest/checks/runs#create-a-check-run
SUMMARY_LIMIT = 65_535


# checks/create and checks/update: the conclusions GitHub takes (the REST description's
# enum); "stale" is GitHub's own, and any other is 422.
CONCLUSIONS = frozenset(
    {"action_required", "cancelled", "failure", "neutral", "success", "skipped", "timed_out"}
)


def _check_fits(status: str, conclusion: str | None, summary: str) -> None:
    if status not in {"queued", "in_progress", "completed"}:
        raise GitHubError(f"Invalid request: status {status!r} is not one GitHub takes", status=422)
    if conclusion is not None and conclusion not in CONCLUSIONS:
        raise GitHubError(
            f"Invalid request: conclusion {conclusion!r} is not one GitHub takes", status=422
        )
    if status == "completed" and conclusion is None:
        raise GitHubError("Invalid request: a completed check run needs a conclusion", status=422)
    _summary_fits(summary)


def _summary_fits(summary: str) -> None:
    if len(summary) > SUMMARY_LIMIT:
        raise GitHubError(
            f"Invalid request: output.summary is too long (maximum is {SUMMARY_LIMIT} characters)",
            status=422,
        )


class FakeGitHub:
    """An in-memory GitHub behind the port; see the module docstring."""

    def __init__(self) -> None:
        self.worlds: dict[str, World] = {}
        self.calls: list[Call] = []
        self._faults: dict[str, list[BaseException]] = {}
        self._ids = itertools.count(1000)
        self.now = datetime(2026, 1, 1, tzinfo=UTC)
        self.run_ids: list[int] = []  # the ids the next dispatched runs get, then counted ones

    # -- setting the scene -------------------------------------------------------------
    def world(self, repo: Repo | str) -> World:
        key = repo if isinstance(repo, str) else repo.full_name
        if key not in self.worlds:
            self.worlds[key] = World(refs=RefLog({"heads/main": NO_SHA}, clock=lambda: self.now))
        return self.worlds[key]

    def fail(self, name: str, error: BaseException, times: int = 1) -> None:
        self._faults.setdefault(name, []).extend([error] * times)

    def add_issue(self, repo: Repo | str, number: int, title: str, body: str = "") -> Issue:
        issue = Issue(number=number, title=title, body=body, user=User(login="octocat"))
        self.world(repo).issues[number] = issue
        return issue

    def add_pull(
        self, repo: Repo | str, number: int, head_ref: str, head_sha: str, **fields: Any
    ) -> PullRequest:
        w = self.world(repo)
        home = branch_repo(repo if isinstance(repo, str) else repo.full_name)
        head_repo = fields.pop("head_repo", home)  # another repository's: a fork PR
        pull = PullRequest(
            number=number,
            head=Branch(ref=head_ref, sha=head_sha, repo=head_repo),
            base=Branch(ref=w.default_branch, sha=w.refs[f"heads/{w.default_branch}"], repo=home),
            mergeable=fields.pop("mergeable", True),
            **fields,
        )
        w.pulls[number] = pull
        # A fork PR's branch is the fork's: this repository holds its head only as
        # refs/pull/<n>/head (https://docs.github.com/en/pull-requests/collaborating-with-pull-requests/reviewing-changes-in-pull-requests/checking-out-pull-requests-locally)
        ours = head_repo is home or (
            head_repo is not None and head_repo.full_name == home.full_name
        )
        w.refs[f"heads/{head_ref}" if ours else f"pull/{number}/head"] = head_sha
        w.commits.setdefault(head_sha, self.now)
        self._hold(w, head_sha)
        return pull

    def _hold(self, w: World, sha: str) -> None:
        """A PR's head is a commit GitHub holds: one made up here (an empty tree) when the
        test named a sha of its own rather than one it committed."""
        if sha not in w.objects:
            empty = _tree_with(w, [], [])
            w.objects[sha] = GitCommit(sha=sha, tree=empty, committed_at=w.commits.get(sha))

    def push(
        self, repo: Repo | str, number: int, sha: str, *, committed_at: datetime | None = None
    ) -> None:
        """Push ``sha`` as PR ``number``'s head now; its committer date is ``committed_at``
        (default now): whoever makes a commit writes its date, GitHub only the push time."""
        w = self.world(repo)
        pull = w.pulls[number]
        w.pulls[number] = pull.model_copy(
            update={"head": pull.head.model_copy(update={"sha": sha})}
        )
        w.refs[f"heads/{pull.head.ref}"] = sha
        w.commits[sha] = committed_at or self.now
        self._hold(w, sha)

    def set_check(
        self,
        repo: Repo | str,
        sha: str,
        name: str,
        status: str,
        conc: str | None,
        app: str | None = None,
    ) -> None:
        """A check run on ``sha``, made by the App whose slug is ``app`` (None: unsaid)."""
        runs = [c for c in self.world(repo).checks.get(sha, []) if c.name != name]
        made_by = CheckApp(slug=app) if app else None
        runs.append(
            CheckRun(id=next(self._ids), name=name, status=status, conclusion=conc, app=made_by)
        )
        self.world(repo).checks[sha] = runs

    def named(self, name: str) -> list[Call]:
        return [c for c in self.calls if c.name == name]

    def keep_comment(
        self,
        repo: Repo | str,
        number: int,
        *,
        comment_id: int,
        body: str,
        login: str,
        user_type: str = "User",
        user_id: int = 0,
        created_at: datetime | None = None,
        edited: bool = False,
    ) -> Comment:
        """A person's comment, kept as GitHub keeps it before it sends the webhook (an edit
        keeps the id and moves ``updated_at``)."""
        thread = self.world(repo).comments.setdefault(number, [])
        made = created_at or self.now
        old = next((c for c in thread if c.id == comment_id), None)
        comment = Comment(
            id=comment_id,
            body=body,
            user=User(login=login, type=user_type, id=user_id),
            created_at=old.created_at if old and old.created_at else made,
            updated_at=max(self.now, made + timedelta(seconds=1)) if edited else made,
        )
        if old is not None:
            thread[thread.index(old)] = comment
        else:
            thread.append(comment)
        return comment

    def drop_comment(self, repo: Repo | str, comment_id: int) -> None:
        """A comment deleted on GitHub."""
        for thread in self.world(repo).comments.values():
            thread[:] = [c for c in thread if c.id != comment_id]

    def comments_on(self, repo: Repo | str, number: int) -> list[str]:
        """What the App (this port's token) wrote on thread ``number``; people's comments
        kept by ``keep_comment`` are in the thread but are not magi's replies."""
        thread = self.world(repo).comments.get(number, [])
        return [c.body for c in thread if c.user is not None and c.user.login == APP_LOGIN]

    def commit_files(
        self,
        repo: Repo | str,
        files: Mapping[str, str | bytes],
        *,
        parent: str | None = None,
        message: str = "",
    ) -> str:
        """Store ``files`` (``dir/name`` paths) as one commit on ``parent``; its sha."""
        w = self.world(repo)
        entries = [TreeEntry(path=k, mode="100644", type="blob", sha="") for k in files]
        blobs = {
            k: _put(w, v.encode() if isinstance(v, str) else v, "blob") for k, v in files.items()
        }
        tree = _tree_with(w, [], [e.model_copy(update={"sha": blobs[e.path]}) for e in entries])
        return _commit(w, message or "files", tree, [parent] if parent else [])

    def file_at(self, repo: Repo | str, commit: str, path: str) -> bytes | None:
        """The content of ``path`` in ``commit`` (None when absent)."""
        w = self.world(repo)
        obj = w.objects.get(commit)
        node: Any = w.objects.get(obj.tree) if isinstance(obj, GitCommit) else None
        *dirs, name = path.split("/")
        for part in [*dirs, name]:
            if not isinstance(node, list):
                return None
            entry = next((e for e in node if e.path == part), None)
            node = w.objects.get(entry.sha) if entry else None
        return node if isinstance(node, bytes) else None

    def mirror_ref(self, repo: Repo | str, git_dir: Path, ref: str) -> str:
        """Copy ``ref`` and every object it reaches from a real repository (a bare origin
        the runner pushed to) into this fake, under git's own shas: the fake does not see
        git pushes, and this is what GitHub would then hold."""

        def git(*args: str) -> bytes:
            out = subprocess.run(
                ["git", *args], cwd=git_dir, capture_output=True, check=True
            ).stdout
            return bytes(out)

        w = self.world(repo)
        head = git("rev-parse", ref).decode().strip()
        for line in git("rev-list", "--objects", head).decode().splitlines():
            sha = line.split(" ", 1)[0]
            kind = git("cat-file", "-t", sha).decode().strip()
            if kind == "blob":
                w.objects[sha] = git("cat-file", "blob", sha)
            elif kind == "tree":
                entries = []
                for row in git("ls-tree", "-l", sha).decode().splitlines():
                    meta, name = row.split("\t", 1)
                    mode, typ, obj, size = meta.split()
                    entries.append(
                        TreeEntry(
                            path=name,
                            mode=mode,
                            type=typ,
                            sha=obj,
                            size=None if size == "-" else int(size),
                        )
                    )
                w.objects[sha] = entries
            elif kind == "commit":
                text = git("cat-file", "commit", sha).decode()
                headers, _, message = text.partition("\n\n")
                fields = [h.split(" ", 1) for h in headers.splitlines() if " " in h]
                w.objects[sha] = GitCommit(
                    sha=sha,
                    message=message,
                    tree=next(v for k, v in fields if k == "tree"),
                    parents=[v for k, v in fields if k == "parent"],
                )
        w.refs[ref.removeprefix("refs/")] = head
        return head

    def ancestors(self, repo: Repo | str, sha: str) -> set[str]:
        """``sha`` and every commit reachable from it."""
        w, seen, todo = self.world(repo), set(), [sha]
        while todo:
            cur = todo.pop()
            obj = w.objects.get(cur)
            if cur in seen or not isinstance(obj, GitCommit):
                continue
            seen.add(cur)
            todo.extend(obj.parents)
        return seen

    async def _enter(self, call: str, repo: Repo, /, **args: Any) -> World:
        self.calls.append(Call(call, repo.full_name, args))
        await asyncio.sleep(0)
        faults = self._faults.get(call)
        if faults:
            raise faults.pop(0)
        return self.world(repo)

    # -- issues and comments -----------------------------------------------------------
    async def create_comment(self, repo: Repo, number: int, body: str) -> Comment:
        w = await self._enter("create_comment", repo, number=number, body=body)
        _fits(body)
        cid = next(self._ids)
        comment = Comment(
            id=cid,
            body=body,
            html_url=f"https://github.com/{repo.full_name}/issues/{number}#issuecomment-{cid}",
            user=User(login=APP_LOGIN, type="Bot"),
            created_at=self.now,
            updated_at=self.now,
        )
        w.comments.setdefault(number, []).append(comment)
        return comment

    async def update_comment(self, repo: Repo, comment_id: int, body: str) -> Comment:
        w = await self._enter("update_comment", repo, comment_id=comment_id, body=body)
        _fits(body)
        for thread in w.comments.values():
            for i, c in enumerate(thread):
                if c.id == comment_id:
                    thread[i] = c.model_copy(update={"body": body, "updated_at": self.now})
                    return thread[i]
        raise GitHubError("comment not found", status=404)

    async def list_comments(self, repo: Repo, number: int) -> list[Comment]:
        w = await self._enter("list_comments", repo, number=number)
        return list(w.comments.get(number, []))

    async def react_to_comment(self, repo: Repo, comment_id: int, content: str) -> None:
        w = await self._enter("react_to_comment", repo, comment_id=comment_id, content=content)
        w.reactions.append(("comment", comment_id, content))

    async def react_to_issue(self, repo: Repo, number: int, content: str) -> None:
        w = await self._enter("react_to_issue", repo, number=number, content=content)
        w.reactions.append(("issue", number, content))

    async def add_labels(self, repo: Repo, number: int, labels: Sequence[str]) -> None:
        w = await self._enter("add_labels", repo, number=number, labels=list(labels))
        issue = w.issues.get(number) or Issue(number=number)
        have = [lb.name for lb in issue.labels]
        names = have + [n for n in labels if n not in have]
        w.issues[number] = issue.model_copy(update={"labels": [Label(name=n) for n in names]})

    async def remove_label(self, repo: Repo, number: int, name: str) -> None:
        w = await self._enter("remove_label", repo, number=number, name=name)
        issue = w.issues.get(number)
        if issue is not None:
            kept = [lb for lb in issue.labels if lb.name != name]
            w.issues[number] = issue.model_copy(update={"labels": kept})

    async def get_issue(self, repo: Repo, number: int) -> Issue:
        w = await self._enter("get_issue", repo, number=number)
        if number not in w.issues:
            raise GitHubError("issue not found", status=404)
        return w.issues[number]

    async def close_issue(self, repo: Repo, number: int) -> Issue:
        w = await self._enter("close_issue", repo, number=number)
        issue = w.issues.get(number) or Issue(number=number)
        w.issues[number] = issue.model_copy(update={"state": "closed"})
        return w.issues[number]

    async def permission(self, repo: Repo, login: str) -> Permission:
        w = await self._enter("permission", repo, login=login)
        return Permission(permission=w.permissions.get(login, "none"))

    # -- contents and refs -------------------------------------------------------------
    async def get_content(self, repo: Repo, path: str, ref: str) -> Content | None:
        w = await self._enter("get_content", repo, path=path, ref=ref)
        text = w.files.get((ref, path))
        return None if text is None else Content(path=path, sha="f" * 40, text=text)

    async def get_commit(self, repo: Repo, sha: str) -> Commit:
        w = await self._enter("get_commit", repo, sha=sha)
        return Commit(sha=sha, committed_at=w.commits.get(sha, self.now))

    async def create_ref(self, repo: Repo, ref: str, sha: str) -> bool:
        w = await self._enter("create_ref", repo, ref=ref, sha=sha)
        key = ref.removeprefix("refs/")
        if key in w.refs:
            return False
        w.refs[key] = sha
        return True

    async def get_ref(self, repo: Repo, ref: str) -> GitRef | None:
        w = await self._enter("get_ref", repo, ref=ref)
        sha = w.refs.get(ref.removeprefix("refs/"))
        return None if sha is None else GitRef(ref=f"refs/{ref.removeprefix('refs/')}", sha=sha)

    async def delete_ref(self, repo: Repo, ref: str) -> bool:
        w = await self._enter("delete_ref", repo, ref=ref)
        return w.refs.pop(ref.removeprefix("refs/"), None) is not None

    async def update_ref(self, repo: Repo, ref: str, sha: str, *, force: bool) -> GitRef:
        w = await self._enter("update_ref", repo, ref=ref, sha=sha, force=force)
        key = ref.removeprefix("refs/")
        old = w.refs.get(key)
        if old is None:
            raise GitHubError("Reference does not exist", status=422)
        forward = old == sha or old in self.ancestors(repo, sha)
        if not force and not forward:
            raise GitHubError("Update is not a fast forward", status=422)
        w.refs[key] = sha
        log = w.refs.activity
        if not forward and log and log[-1].ref == f"refs/{key}":
            log[-1] = log[-1].model_copy(update={"activity_type": "force_push"})
        return GitRef(ref=f"refs/{ref.removeprefix('refs/')}", sha=sha)

    async def matching_refs(self, repo: Repo, prefix: str) -> list[GitRef]:
        w = await self._enter("matching_refs", repo, prefix=prefix)
        want = prefix.removeprefix("refs/")
        return [GitRef(ref=f"refs/{k}", sha=v) for k, v in w.refs.items() if k.startswith(want)]

    async def list_commits(
        self, repo: Repo, ref: str, *, since: datetime | None = None
    ) -> list[GitCommit]:
        """The commits reachable from branch ``ref`` (or a sha), newest first, as GitHub
        lists a branch's history; with ``since``, those committed at or after it."""
        w = await self._enter("list_commits", repo, ref=ref, since=since)
        head = w.refs.get(f"heads/{ref.removeprefix('refs/heads/')}", ref)
        out: list[GitCommit] = []
        seen: set[str] = set()
        todo = [head]
        while todo:
            sha = todo.pop(0)
            obj = w.objects.get(sha)
            if sha in seen or not isinstance(obj, GitCommit):
                continue
            seen.add(sha)
            out.append(obj)
            todo.extend(obj.parents)
        if since is not None:
            out = [c for c in out if c.committed_at is None or c.committed_at >= since]
        return out

    async def list_activities(self, repo: Repo, ref: str) -> list[Activity]:
        w = await self._enter("list_activities", repo, ref=ref)
        want = ref if ref.startswith("refs/") else f"refs/heads/{ref}"
        return [a for a in reversed(w.refs.activity) if a.ref == want][:100]

    async def branch_rules(self, repo: Repo, branch: str) -> list[BranchRule]:
        w = await self._enter("branch_rules", repo, branch=branch)
        return as_ruleset(w.rules.get(branch, BranchRules()))

    # -- the runner ---------------------------------------------------------------------
    async def dispatch_workflow(
        self, repo: Repo, workflow: str, ref: str, inputs: Mapping[str, str]
    ) -> Dispatch:
        w = await self._enter("dispatch_workflow", repo, workflow=workflow, ref=ref, inputs=inputs)
        if workflow not in w.workflows:
            raise GitHubError(f"workflow {workflow} not found", status=404)
        unexpected = sorted(set(inputs) - w.declared.get(workflow, set(inputs)))
        if unexpected:
            raise GitHubError(f"Unexpected inputs provided: {json.dumps(unexpected)}", status=422)
        run_id = self.run_ids.pop(0) if self.run_ids else next(self._ids)
        # GitHub renders the workflow's `run-name:` from the inputs (magi's names the
        # command, the issue or PR and the run): what the App finds a stage's run by.
        named = RunTitle(
            command=inputs.get("command") or "compete",
            issue=int(inputs["issue"]) if str(inputs.get("issue", "")).isdigit() else None,
            pr=int(inputs["pr"]) if str(inputs.get("pr", "")).isdigit() else None,
            run=inputs.get("run_id") or None,
        )
        run = WorkflowRun(
            id=run_id,
            status="queued",
            event="workflow_dispatch",
            display_title=title(named),
            path=f".github/workflows/{workflow}",
            html_url=f"https://github.example/runs/{run_id}",
            head_repository=BranchRepo(full_name=repo.full_name),
        )
        w.runs.setdefault(run.id, run)  # a run the test set up already (its run-name) stays
        w.dispatches.append({"workflow": workflow, "ref": ref, "inputs": dict(inputs)})
        return Dispatch(workflow_run_id=run.id, html_url=f"https://github.example/runs/{run.id}")

    async def list_workflow_runs(
        self, repo: Repo, workflow: str, *, status: str | None = None
    ) -> list[WorkflowRun]:
        w = await self._enter("list_workflow_runs", repo, workflow=workflow, status=status)
        return [r for r in w.runs.values() if status is None or r.status == status]

    async def cancel_workflow_run(self, repo: Repo, run_id: int) -> bool:
        w = await self._enter("cancel_workflow_run", repo, run_id=run_id)
        if run_id not in w.runs:
            raise GitHubError("Not Found", status=404)
        run = w.runs[run_id]
        if run.status == "completed":
            # GitHub answers 409 (``CANCEL_FINISHED``), which the port reads as False.
            return False
        w.runs[run_id] = run.model_copy(update={"status": "completed", "conclusion": "cancelled"})
        return True

    async def rerun_failed_jobs(self, repo: Repo, run_id: int) -> None:
        # https://docs.github.com/en/rest/actions/workflow-runs#re-run-failed-jobs-from-a-workflow-run
        w = await self._enter("rerun_failed_jobs", repo, run_id=run_id)
        run = w.runs.get(run_id)
        if run is None:
            raise GitHubError("Not Found", status=404)
        if run.status != "completed":  # GitHub re-runs only a finished run
            raise GitHubError("This workflow run is not completed", status=403)
        w.runs[run_id] = run.model_copy(update={"status": "queued", "conclusion": None})
        w.reruns.append(run_id)
        jobs = f"/actions/runs/{run_id}/job/"
        for runs in w.checks.values():  # each failed job's check runs again: queued now
            for i, c in enumerate(runs):
                red = c.conclusion not in {"success", "neutral", "skipped"}
                if jobs in (c.details_url or "") and c.status == "completed" and red:
                    runs[i] = c.model_copy(update={"status": "queued", "conclusion": None})

    def set_actions_check(
        self, repo: Repo | str, sha: str, name: str, conc: str | None, run_id: int, job: int
    ) -> None:
        """A check run GitHub Actions made for job ``job`` of run ``run_id`` (the run kept
        too, finished when the check is): what magi can re-run."""
        full = repo if isinstance(repo, str) else repo.full_name
        self.set_check(repo, sha, name, "completed" if conc else "in_progress", conc)
        w = self.world(repo)
        url = f"https://github.com/{full}/actions/runs/{run_id}/job/{job}"
        runs = w.checks[sha]
        runs[-1] = runs[-1].model_copy(
            update={"details_url": url, "app": CheckApp(slug="github-actions"), "head_sha": sha}
        )
        status = "completed" if conc else "in_progress"
        self.add_run(
            repo, run_id, f"CI {name}", status=status, conclusion=conc, event="pull_request"
        )
        # its job, as the jobs API tells it: a runner took it, and its one step ended as it
        # did (a red job's step failed: the code's, unless a test says the runner's steps)
        step = JobStep(name="Run tests", status=status, conclusion=conc)
        self.set_job(
            repo,
            run_id,
            WorkflowJob(
                id=job,
                name=name,
                status=status,
                conclusion=conc,
                runner_name="runner-1",
                steps=[step],
            ),
        )

    # -- pull requests -----------------------------------------------------------------
    async def get_pull(self, repo: Repo, number: int) -> PullRequest:
        w = await self._enter("get_pull", repo, number=number)
        if number not in w.pulls:
            raise GitHubError("pull request not found", status=404)
        return w.pulls[number]

    async def list_pulls(
        self, repo: Repo, *, state: str = "open", head: str | None = None
    ) -> list[PullRequest]:
        w = await self._enter("list_pulls", repo, state=state, head=head)
        branch = head.partition(":")[2] if head else None  # GitHub's head filter: "owner:branch"
        return [
            p
            for p in w.pulls.values()
            if (state == "all" or p.state == state) and (branch is None or p.head.ref == branch)
        ]

    async def list_reviews(self, repo: Repo, number: int) -> list[PullReview]:
        w = await self._enter("list_reviews", repo, number=number)
        if number not in w.pulls:
            raise GitHubError("Not Found", status=404)
        return [
            PullReview(user=User(login=r.login), state=r.state) for r in w.reviews.get(number, [])
        ]

    async def create_pull(
        self, repo: Repo, *, title: str, head: str, base: str, body: str, draft: bool
    ) -> PullRequest:
        w = await self._enter("create_pull", repo, title=title, head=head, base=base, draft=draft)
        if draft and drafts_refused(w):
            raise GitHubError(DRAFTS_REFUSED, status=422)
        number = max([*w.pulls, *w.issues, 0]) + 1
        pull = PullRequest(
            number=number,
            title=title,
            body=body,
            draft=draft,
            head=Branch(
                ref=head,
                sha=w.refs.get(f"heads/{head}", "1" * 40),
                repo=branch_repo(repo.full_name),
            ),
            base=Branch(
                ref=base,
                sha=w.refs.get(f"heads/{base}", "0" * 40),
                repo=branch_repo(repo.full_name),
            ),
        )
        w.pulls[number] = pull
        return pull

    async def update_pull(
        self,
        repo: Repo,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        state: str | None = None,
    ) -> PullRequest:
        w = await self._enter("update_pull", repo, number=number, title=title, state=state)
        changes = {k: v for k, v in {"title": title, "body": body, "state": state}.items() if v}
        w.pulls[number] = w.pulls[number].model_copy(update=changes)
        return w.pulls[number]

    async def merge_pull(
        self, repo: Repo, number: int, *, sha: str, method: str, title: str | None
    ) -> MergeResult:
        w = await self._enter("merge_pull", repo, number=number, sha=sha, method=method)
        pull = w.pulls[number]
        if pull.draft or pull.mergeable is False or pull.state != "open":
            # pulls/merge: "405 Method Not Allowed if merge cannot be performed" (a draft,
            # a conflict, a closed PR). https://docs.github.com/en/rest/pulls/pulls#merge-a-pull-request
            raise GitHubError("Pull Request is not mergeable", status=405)
        if pull.head.sha != sha:
            raise GitHubError(
                "Head branch was modified. Review and try the merge again.", status=409
            )
        refused = self._ruled(repo, w, pull)
        if refused is not None:
            raise refused
        w.merges.append({"number": number, "sha": sha, "method": method, "title": title})
        w.pulls[number] = pull.model_copy(update={"merged": True, "state": "closed"})
        w.merge_commits[number] = "m" * 40
        return MergeResult(merged=True, sha="m" * 40, message="Pull Request successfully merged")

    # -- branch rules (magi.testing.github_rules) ---------------------------------------
    def set_rules(self, repo: Repo | str, rules: BranchRules, branch: str = "") -> None:
        """Protect ``branch`` (default: the default branch) with ``rules``."""
        w = self.world(repo)
        w.rules[branch or w.default_branch] = rules

    def add_review(self, repo: Repo | str, number: int, login: str, state: str) -> None:
        """A review submitted on PR ``number``, kept as GitHub keeps it before the webhook."""
        self.world(repo).reviews.setdefault(number, []).append(Reviewed(login, state))

    def move_base(self, repo: Repo | str, sha: str) -> None:
        """Someone else's merge moves the default branch to ``sha``: each open PR on it is
        behind now, as GitHub's ``mergeable_state`` says (``behind`` where the branch must be
        up to date, ``clean`` otherwise: GitHub says behind only when a rule needs it)."""
        w = self.world(repo)
        w.refs[f"heads/{w.default_branch}"] = sha
        strict = w.rules.get(w.default_branch, BranchRules()).up_to_date
        for n, p in w.pulls.items():
            if p.state == "open" and p.base.ref == w.default_branch and p.base.sha != sha:
                w.pulls[n] = p.model_copy(
                    update={"mergeable_state": "behind" if strict else "clean"}
                )

    def rebased(self, repo: Repo | str, number: int, sha: str) -> None:
        """PR ``number``'s branch rebased onto the base's head and pushed as ``sha``."""
        w = self.world(repo)
        self.push(repo, number, sha)
        p = w.pulls[number]
        base = p.base.model_copy(update={"sha": w.refs[f"heads/{p.base.ref}"]})
        w.pulls[number] = p.model_copy(update={"base": base, "mergeable_state": "clean"})

    async def enqueue_pull(self, repo: Repo, number: int, *, sha: str) -> int:
        """GraphQL ``enqueuePullRequest``: the PR joins its base's merge queue, and GitHub
        makes the queue's merge group (the base with the PR on it) on a branch
        ``gh-readonly-queue/<base>/pr-<n>-<head>``, whose checks the queue waits for.
        https://docs.github.com/en/graphql/reference/mutations#enqueuepullrequest"""
        w = await self._enter("enqueue_pull", repo, number=number, sha=sha)
        pull = w.pulls.get(number)
        if pull is None:
            raise GitHubError("Could not resolve to a PullRequest", status=404)
        if not w.rules.get(pull.base.ref, BranchRules()).merge_queue:
            raise GitHubError("Pull request is not in a merge queue enabled branch", status=422)
        if pull.head.sha != sha:
            raise GitHubError("Expected head oid does not match the head", status=422)
        queued = [n for n, _ in w.queue]
        if number in queued:
            return queued.index(number) + 1
        head = w.objects.get(sha)
        tree = head.tree if isinstance(head, GitCommit) else _tree_with(w, [], [])
        base = w.refs[f"heads/{pull.base.ref}"]
        group = _commit(w, f"Merge pull request #{number}", tree, [base, sha])
        w.refs[f"heads/gh-readonly-queue/{pull.base.ref}/pr-{number}-{sha}"] = group
        w.queue.append((number, group))
        return len(w.queue)

    def dequeue(self, repo: Repo | str, number: int, reason: str) -> None:
        """GitHub takes PR ``number`` out of its base's merge queue for ``reason`` (its group
        branch goes with it), before it sends ``pull_request`` ``dequeued``. The reasons are
        GitHub's closed list (``webhook-pull-request-dequeued`` in its webhook description);
        another is no reason GitHub sends.
        https://docs.github.com/en/webhooks/webhook-events-and-payloads#pull_request"""
        if reason not in DEQUEUE_REASONS:
            raise ValueError(f"GitHub sends no dequeue reason {reason!r}")
        w = self.world(repo)
        for entry in [q for q in w.queue if q[0] == number]:
            w.queue.remove(entry)
            pull = w.pulls[number]
            w.refs.pop(f"heads/gh-readonly-queue/{pull.base.ref}/pr-{number}-{pull.head.sha}", None)

    def run_queue(self, repo: Repo | str) -> list[int]:
        """The merge queue merges each group whose required checks are green on the group's
        commit (the PR's own are not enough); the PRs it merged."""
        w = self.world(repo)
        merged: list[int] = []
        for number, group in list(w.queue):
            pull = w.pulls[number]
            rules = w.rules.get(pull.base.ref, BranchRules())
            wanted = BranchRules(required_checks=rules.required_checks)
            checks, statuses = w.checks.get(group, []), w.statuses.get(group, [])
            if refusal(
                wanted,
                reviews=[],
                permissions={},
                checks=checks,
                statuses=statuses,
                up_to_date=True,
            ):
                break  # the queue waits in order
            w.queue.remove((number, group))
            w.refs[f"heads/{pull.base.ref}"] = group
            del w.refs[f"heads/gh-readonly-queue/{pull.base.ref}/pr-{number}-{pull.head.sha}"]
            w.merges.append(
                {"number": number, "sha": pull.head.sha, "method": "queue", "title": None}
            )
            update = {"merged": True, "state": "closed", "merge_commit_sha": group}
            w.pulls[number] = pull.model_copy(update=update)
            merged.append(number)
        return merged

    def _ruled(self, repo: Repo, w: World, pull: PullRequest) -> GitHubError | None:
        rules = w.rules.get(pull.base.ref)
        if rules is None:
            return None
        base = w.refs.get(f"heads/{pull.base.ref}")
        return refusal(
            rules,
            reviews=w.reviews.get(pull.number, []),
            permissions=w.permissions,
            checks=w.checks.get(pull.head.sha, []),
            statuses=w.statuses.get(pull.head.sha, []),
            up_to_date=base == pull.base.sha or base in self.ancestors(repo, pull.head.sha),
        )

    # -- checks and statuses -----------------------------------------------------------
    async def list_check_runs(self, repo: Repo, ref: str) -> list[CheckRun]:
        w = await self._enter("list_check_runs", repo, ref=ref)
        return list(w.checks.get(ref, []))

    async def create_check_run(
        self,
        repo: Repo,
        *,
        name: str,
        head_sha: str,
        status: str,
        conclusion: str | None = None,
        summary: str = "",
        details_url: str | None = None,
    ) -> CheckRun:
        w = await self._enter(
            "create_check_run",
            repo,
            name=name,
            head_sha=head_sha,
            conclusion=conclusion,
            summary=summary,
            details_url=details_url,
        )
        _check_fits(status, conclusion, summary)
        run = CheckRun(
            id=next(self._ids),
            name=name,
            status=status,
            conclusion=conclusion,
            details_url=details_url,
            # GitHub files a check run under the App whose token made it
            # https://docs.github.com/en/rest/checks/runs#create-a-check-run
            app=CheckApp(slug=APP_LOGIN.removesuffix("[bot]")),
        )
        w.checks.setdefault(head_sha, []).append(run.model_copy(update={"head_sha": head_sha}))
        return run

    async def update_check_run(
        self,
        repo: Repo,
        check_run_id: int,
        *,
        status: str,
        conclusion: str | None = None,
        summary: str = "",
        details_url: str | None = None,
    ) -> CheckRun:
        w = await self._enter(
            "update_check_run",
            repo,
            check_run_id=check_run_id,
            status=status,
            conclusion=conclusion,
            summary=summary,
            details_url=details_url,
        )
        _check_fits(status, conclusion, summary)
        for runs in w.checks.values():
            for i, r in enumerate(runs):
                if r.id == check_run_id:
                    update = {"status": status, "conclusion": conclusion}
                    if details_url is not None:
                        update["details_url"] = details_url
                    runs[i] = r.model_copy(update=update)
                    return runs[i]
        raise GitHubError("check run not found", status=404)

    async def job_log_tail(self, repo: Repo, job_id: int, *, max_bytes: int) -> str | None:
        w = await self._enter("job_log_tail", repo, job_id=job_id, max_bytes=max_bytes)
        log = w.job_logs.get(job_id)
        if log is None:
            return None
        return log.encode()[-max_bytes:].decode("utf-8", "replace")

    async def combined_status(self, repo: Repo, ref: str) -> CombinedStatus:
        w = await self._enter("combined_status", repo, ref=ref)
        statuses = w.statuses.get(ref, [])
        states = {s.state for s in statuses}
        state = (
            "success" if states <= {"success"} else "failure" if "failure" in states else "pending"
        )
        return CombinedStatus(
            state=state if statuses else "pending", total_count=len(statuses), statuses=statuses
        )

    # -- git objects --------------------------------------------------------------------
    async def get_git_commit(self, repo: Repo, sha: str) -> GitCommit:
        w = await self._enter("get_git_commit", repo, sha=sha)
        if sha not in w.objects and sha in w.refs.values() and sha in _branch_heads(w):
            self._hold(w, sha)  # a branch's head is a commit GitHub holds, whatever the test set
        obj = w.objects.get(sha)
        if not isinstance(obj, GitCommit):
            raise GitHubError("Not Found", status=404)
        return obj

    async def get_tree(self, repo: Repo, sha: str) -> GitTree:
        w = await self._enter("get_tree", repo, sha=sha)
        obj = w.objects.get(sha)
        if not isinstance(obj, list):
            raise GitHubError("Not Found", status=404)
        return GitTree(sha=sha, tree=list(obj))

    async def get_blob(self, repo: Repo, sha: str) -> Blob:
        w = await self._enter("get_blob", repo, sha=sha)
        obj = w.objects.get(sha)
        if not isinstance(obj, bytes):
            raise GitHubError("Not Found", status=404)
        return Blob(sha=sha, content=obj)

    async def create_blob(self, repo: Repo, content: bytes) -> str:
        w = await self._enter("create_blob", repo, size=len(content))
        return _put(w, content, "blob")

    async def create_tree(
        self, repo: Repo, entries: Sequence[TreeEntry], *, base_tree: str | None
    ) -> GitTree:
        w = await self._enter(
            "create_tree", repo, paths=[e.path for e in entries], base_tree=base_tree
        )
        base: list[TreeEntry] = []
        if base_tree is not None:
            found = w.objects.get(base_tree)
            if not isinstance(found, list):
                raise GitHubError("base_tree is not a valid tree oid", status=422)
            base = found
        for e in entries:
            if e.sha not in w.objects:
                raise GitHubError(f"Invalid tree info: {e.sha} does not exist", status=422)
        sha = _tree_with(w, base, list(entries))
        return GitTree(sha=sha, tree=_entries(w, sha))

    async def create_git_commit(
        self, repo: Repo, *, message: str, tree: str, parents: Sequence[str]
    ) -> GitCommit:
        w = await self._enter(
            "create_git_commit", repo, message=message, tree=tree, parents=list(parents)
        )
        if not isinstance(w.objects.get(tree), list):
            raise GitHubError("Tree SHA does not exist", status=422)
        for p in parents:
            if p not in w.objects and p in _branch_heads(w):
                self._hold(w, p)  # a branch's head is a commit GitHub holds (get_git_commit)
        if any(not isinstance(w.objects.get(p), GitCommit) for p in parents):
            raise GitHubError("Parent SHA does not exist or is not a commit object", status=422)
        sha = _commit(w, message, tree, list(parents), int(self.now.timestamp()))
        w.commits.setdefault(sha, self.now)
        made = GitCommit(
            sha=sha, message=message, tree=tree, parents=list(parents), committed_at=self.now
        )
        w.objects[sha] = made  # GitHub dates a commit it makes (no committer given): now
        return made

    # -- publishing: follow-up issues and drafts ----------------------------------------
    async def create_issue(
        self, repo: Repo, *, title: str, body: str, labels: Sequence[str]
    ) -> Issue:
        w = await self._enter("create_issue", repo, title=title, body=body, labels=list(labels))
        number = max([*w.pulls, *w.issues, 0]) + 1
        issue = Issue(
            number=number,
            title=title,
            body=body,
            labels=[Label(name=n) for n in labels],
            user=User(login=APP_LOGIN, type="Bot"),
        )
        w.issues[number] = issue
        return issue

    async def list_issues(self, repo: Repo, *, labels: Sequence[str]) -> list[Issue]:
        w = await self._enter("list_issues", repo, labels=list(labels))
        want = set(labels)
        return [i for i in w.issues.values() if want <= {lb.name for lb in i.labels}]

    async def set_draft(self, repo: Repo, number: int, draft: bool) -> PullRequest:
        w = await self._enter("set_draft", repo, number=number, draft=draft)
        if number not in w.pulls:
            raise GitHubError("pull request not found", status=404)
        if draft and drafts_refused(w):  # convertPullRequestToDraft: refused alike
            raise GitHubError(DRAFTS_REFUSED, status=422)
        w.pulls[number] = w.pulls[number].model_copy(update={"draft": draft})
        return w.pulls[number]

    async def merge_commit(self, repo: Repo, number: int) -> str | None:
        w = await self._enter("merge_commit", repo, number=number)
        if number not in w.pulls:
            raise GitHubError(
                f"Could not resolve to a PullRequest with the number of {number}.", status=404
            )
        return w.merge_commits.get(number) if w.pulls[number].merged else None

    def labels_on(self, repo: Repo | str, number: int) -> list[str]:
        issue = self.world(repo).issues.get(number)
        return [lb.name for lb in issue.labels] if issue else []

    # -- progress: a workflow run and its jobs ------------------------------------------
    def add_run(
        self, repo: Repo | str, run_id: int, display_title: str, **fields: Any
    ) -> WorkflowRun:
        """A workflow run as GitHub shows it (``path`` defaults to magi's workflow, ``event``
        to ``workflow_dispatch``)."""
        fields.setdefault("path", ".github/workflows/magi.yml")
        fields.setdefault("status", "queued")
        fields.setdefault("event", "workflow_dispatch")  # as the App starts magi's runs
        full = repo if isinstance(repo, str) else repo.full_name
        fields.setdefault("head_repository", BranchRepo(full_name=full))
        run = WorkflowRun(id=run_id, display_title=display_title, **fields)
        self.world(repo).runs[run_id] = run
        return run

    def add_fork_run(
        self, repo: Repo | str, run_id: int, display_title: str, fork: str, **fields: Any
    ) -> WorkflowRun:
        """A fork PR's own run of a workflow at the same path: GitHub runs the PR's copy of
        the file for ``pull_request`` (its ``run-name`` is the fork's to write), files it
        under this repository's workflow, with the PR's event and the fork as its head
        repository. https://docs.github.com/en/actions/writing-workflows/choosing-when-your-workflow-runs/events-that-trigger-workflows#workflows-in-forked-repositories"""
        fields.setdefault("event", "pull_request")
        return self.add_run(
            repo, run_id, display_title, head_repository=BranchRepo(full_name=fork), **fields
        )

    def set_job(self, repo: Repo | str, run_id: int, job: WorkflowJob) -> None:
        """Add or replace (by id) one job of a workflow run."""
        jobs = [j for j in self.world(repo).jobs.get(run_id, []) if j.id != job.id]
        self.world(repo).jobs[run_id] = sorted([*jobs, job], key=lambda j: j.id)

    async def get_workflow_run(self, repo: Repo, run_id: int) -> WorkflowRun:
        w = await self._enter("get_workflow_run", repo, run_id=run_id)
        if run_id not in w.runs:
            raise GitHubError("workflow run not found", status=404)
        return w.runs[run_id]

    async def list_run_jobs(self, repo: Repo, run_id: int) -> list[WorkflowJob]:
        w = await self._enter("list_run_jobs", repo, run_id=run_id)
        if run_id not in w.runs:
            raise GitHubError("workflow run not found", status=404)
        return list(w.jobs.get(run_id, []))


def _entries(w: World, sha: str) -> list[TreeEntry]:
    obj = w.objects.get(sha)
    return list(obj) if isinstance(obj, list) else []


def _put(w: World, data: bytes, kind: str, obj: Any = None) -> str:
    """Store an object under its real git sha (``<kind> <size>\\0<data>``)."""
    sha = hashlib.sha1(f"{kind} {len(data)}".encode() + b"\0" + data).hexdigest()  # noqa: S324 - git's own object name
    w.objects.setdefault(sha, data if obj is None else obj)
    return sha


def _tree_bytes(entries: list[TreeEntry]) -> bytes:
    # git orders a tree by name, a subtree's name as if it ended in "/"
    def key(e: TreeEntry) -> bytes:
        return (e.path + ("/" if e.type == "tree" else "")).encode()

    return b"".join(
        f"{e.mode.lstrip('0')} {e.path}".encode() + b"\0" + bytes.fromhex(e.sha)
        for e in sorted(entries, key=key)
    )


def _tree_with(w: World, base: list[TreeEntry], changes: list[TreeEntry]) -> str:
    """A tree: ``base`` with ``changes`` laid over it (``dir/name`` paths make subtrees)."""
    here = {e.path: e for e in base}
    nested: dict[str, list[TreeEntry]] = {}
    for e in changes:
        head, sep, rest = e.path.partition("/")
        if sep:
            nested.setdefault(head, []).append(e.model_copy(update={"path": rest}))
        else:
            here[e.path] = e
    for name, inner in nested.items():
        old = here.get(name)
        sub = w.objects.get(old.sha) if old is not None and old.type == "tree" else None
        sha = _tree_with(w, sub if isinstance(sub, list) else [], inner)
        here[name] = TreeEntry(path=name, mode="040000", type="tree", sha=sha)
    entries = sorted(here.values(), key=lambda e: e.path)
    sized = [
        e.model_copy(update={"size": len(b)}) if isinstance(b := w.objects.get(e.sha), bytes) else e
        for e in entries
    ]
    return _put(w, _tree_bytes(sized), "tree", sized)


def _commit(w: World, message: str, tree: str, parents: list[str], when: int = 0) -> str:
    lines = [f"tree {tree}", *(f"parent {p}" for p in parents)]
    ident = f"magi <magi@invalid> {when} +0000"  # the date is part of the commit, as in git
    text = "\n".join([*lines, f"author {ident}", f"committer {ident}", "", message])
    sha = hashlib.sha1(f"commit {len(text.encode())}".encode() + b"\0" + text.encode()).hexdigest()  # noqa: S324
    w.objects.setdefault(sha, GitCommit(sha=sha, message=message, tree=tree, parents=parents))
    return sha
