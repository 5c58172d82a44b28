"""The routes GitHub's HTTP double serves: each one a real REST operation over ``FakeGitHub``.

Each handler takes the double, the repository, the path parameters and the request, acts
on the double's ``FakeGitHub`` and answers ``(status, body)`` with the body laid over
GitHub's published example for that operation (``over``). ``magi.testing.github_http``
checks every route here against ``operations.tsv`` when a double is built.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

import httpx

from magi.github.models import Repo, TreeEntry
from magi.testing.github import CANCEL_FINISHED

if TYPE_CHECKING:
    from magi.testing.github_http import GitHubHTTP

Handler = Callable[["GitHubHTTP", Repo, dict[str, str], httpx.Request], Any]


def over(example: Any, ours: Mapping[str, Any]) -> dict[str, Any]:
    base = copy.deepcopy(example) if isinstance(example, dict) else {}
    for key, value in ours.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            base[key] = over(base[key], value)
        else:
            base[key] = value
    return base


ROUTES: list[tuple[str, str, Handler]] = []


def route(method: str, template: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        ROUTES.append((method, template, fn))
        return fn

    return register


def _body(request: httpx.Request) -> dict[str, Any]:
    data = json.loads(request.content or b"{}")
    return data if isinstance(data, dict) else {"_": data}


def _query(request: httpx.Request, name: str) -> str | None:
    value = request.url.params.get(name)
    return None if value is None else str(value)


def _page(rq: httpx.Request, items: list[Any]) -> list[Any]:
    """The ``page`` of ``items`` a list request asks for: ``per_page`` defaults to 30 and
    is at most 100, as on GitHub, so a list longer than a page is read only by paging.
    https://docs.github.com/en/rest/using-the-rest-api/using-pagination-in-the-rest-api"""
    page = max(int(_query(rq, "page") or 1), 1)
    per = min(max(int(_query(rq, "per_page") or 30), 1), 100)
    return items[(page - 1) * per : page * per]


def _user(login: str, user_type: str) -> dict[str, Any]:
    return {"login": login, "type": user_type}


C = "/repos/{owner}/{repo}"


def _comment(c: Any) -> dict[str, Any]:
    user = c.user.model_dump() if c.user else _user("ghost", "User")
    out = {"id": c.id, "body": c.body, "user": user}
    for when in ("created_at", "updated_at"):
        if getattr(c, when, None) is not None:
            out[when] = getattr(c, when).isoformat().replace("+00:00", "Z")
    return out


@route("POST", C + "/issues/{issue_number}/comments")
async def _create_comment(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    c = await d.fake.create_comment(repo, int(p["issue_number"]), _body(rq)["body"])
    return 201, d.shaped("POST", C + "/issues/{issue_number}/comments", _comment(c))


@route("GET", C + "/issues/{issue_number}/comments")
async def _list_comments(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    every = await d.fake.list_comments(repo, int(p["issue_number"]))
    page, per = int(_query(rq, "page") or 1), int(_query(rq, "per_page") or 30)
    chunk = every[(page - 1) * per : page * per]
    example = (d.example("GET", C + "/issues/{issue_number}/comments") or [{}])[0]
    return 200, [over(example, _comment(c)) for c in chunk]


@route("PATCH", C + "/issues/comments/{comment_id}")
async def _update_comment(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    c = await d.fake.update_comment(repo, int(p["comment_id"]), _body(rq)["body"])
    return 200, d.shaped("PATCH", C + "/issues/comments/{comment_id}", _comment(c))


@route("POST", C + "/issues/comments/{comment_id}/reactions")
async def _react_comment(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    await d.fake.react_to_comment(repo, int(p["comment_id"]), _body(rq)["content"])
    return 201, d.shaped(
        "POST", C + "/issues/comments/{comment_id}/reactions", {"content": _body(rq)["content"]}
    )


@route("POST", C + "/issues/{issue_number}/reactions")
async def _react_issue(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    await d.fake.react_to_issue(repo, int(p["issue_number"]), _body(rq)["content"])
    return 201, d.shaped(
        "POST", C + "/issues/{issue_number}/reactions", {"content": _body(rq)["content"]}
    )


@route("POST", C + "/issues/{issue_number}/labels")
async def _add_labels(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    labels = _body(rq).get("labels", [])
    await d.fake.add_labels(repo, int(p["issue_number"]), labels)
    return 200, [{"name": n} for n in labels]


@route("DELETE", C + "/issues/{issue_number}/labels/{name}")
async def _remove_label(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    await d.fake.remove_label(repo, int(p["issue_number"]), p["name"])
    return 200, []


def _issue(i: Any) -> dict[str, Any]:
    labels = [{"name": lb.name} for lb in i.labels]  # the fake's, not the example's "bug"
    out = {"number": i.number, "title": i.title, "body": i.body, "state": i.state}
    out["labels"] = labels
    if i.user is not None:
        out["user"] = i.user.model_dump()
    return out


@route("GET", C + "/issues/{issue_number}")
async def _get_issue(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    i = await d.fake.get_issue(repo, int(p["issue_number"]))
    return 200, d.shaped("GET", C + "/issues/{issue_number}", _issue(i))


@route("PATCH", C + "/issues/{issue_number}")
async def _update_issue(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    i = await d.fake.close_issue(repo, int(p["issue_number"]))
    return 200, d.shaped("GET", C + "/issues/{issue_number}", _issue(i))


@route("GET", C + "/collaborators/{username}/permission")
async def _permission(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    perm = await d.fake.permission(repo, p["username"])
    return 200, d.shaped(
        "GET", C + "/collaborators/{username}/permission", {"permission": perm.permission}
    )


@route("GET", C + "/contents/{path}")
async def _content(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    got = await d.fake.get_content(repo, p["path"], _query(rq, "ref") or "")
    if got is None:
        return 404, {"message": "Not Found"}
    text = base64.encodebytes(got.text.encode()).decode()
    return 200, d.shaped(
        "GET",
        C + "/contents/{path}",
        {"type": "file", "path": got.path, "sha": got.sha, "content": text, "encoding": "base64"},
    )


@route("GET", C + "/commits")
async def _commits(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    since = _query(rq, "since")
    when = datetime.fromisoformat(since.replace("Z", "+00:00")) if since else None
    every = await d.fake.list_commits(repo, _query(rq, "sha") or "main", since=when)
    per, page = int(_query(rq, "per_page") or 30), int(_query(rq, "page") or 1)
    example = (d.example("GET", C + "/commits") or [{}])[0]
    rows = []
    for c in every[(page - 1) * per : page * per]:
        date = c.committed_at.isoformat().replace("+00:00", "Z") if c.committed_at else None
        ours = {
            "sha": c.sha,
            "commit": {"message": c.message, "tree": {"sha": c.tree}, "committer": {"date": date}},
            "parents": [{"sha": x} for x in c.parents],
        }
        rows.append(over(example, ours))
    return 200, rows


@route("GET", C + "/commits/{ref}")
async def _commit(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    c = await d.fake.get_commit(repo, p["ref"])
    date = c.committed_at.isoformat().replace("+00:00", "Z") if c.committed_at else None
    return 200, {"sha": c.sha, "commit": {"committer": {"date": date}, "message": "m"}}


def _ref(g: Any) -> dict[str, Any]:
    return {"ref": g.ref, "object": {"sha": g.sha, "type": "commit"}}


@route("POST", C + "/git/refs")
async def _create_ref(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    b = _body(rq)
    if not await d.fake.create_ref(repo, b["ref"], b["sha"]):
        return 422, {"message": "Reference already exists"}
    return 201, d.shaped("POST", C + "/git/refs", {"ref": b["ref"], "object": {"sha": b["sha"]}})


@route("GET", C + "/git/ref/{ref}")
async def _get_ref(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    g = await d.fake.get_ref(repo, p["ref"])
    return (
        (404, {"message": "Not Found"})
        if g is None
        else (200, d.shaped("GET", C + "/git/ref/{ref}", _ref(g)))
    )


@route("DELETE", C + "/git/refs/{ref}")
async def _delete_ref(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    gone = await d.fake.delete_ref(repo, p["ref"])
    return (204, None) if gone else (422, {"message": "Reference does not exist"})


@route("PATCH", C + "/git/refs/{ref}")
async def _update_ref(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    b = _body(rq)
    g = await d.fake.update_ref(repo, p["ref"], b["sha"], force=bool(b.get("force")))
    return 200, d.shaped("PATCH", C + "/git/refs/{ref}", _ref(g))


@route("GET", C + "/git/matching-refs/{ref}")
async def _matching(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    refs = await d.fake.matching_refs(repo, p["ref"])
    example = (d.example("GET", C + "/git/matching-refs/{ref}") or [{}])[0]
    return 200, [over(example, _ref(g)) for g in refs]


@route("GET", C + "/rules/branches/{branch}")
async def _branch_rules(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    # https://docs.github.com/en/rest/repos/rules#get-rules-for-a-branch (paged)
    rules = await d.fake.branch_rules(repo, p["branch"])
    per, page = int(_query(rq, "per_page") or 30), int(_query(rq, "page") or 1)
    source = {"ruleset_source_type": "Repository", "ruleset_source": repo.full_name}
    return 200, [
        {**r.model_dump(mode="json"), **source, "ruleset_id": 42}
        for r in rules[(page - 1) * per : page * per]
    ]


@route("GET", C + "/activity")
async def _activity(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    ref = _query(rq, "ref")
    if ref is None:  # magi always names the branch; the whole repository's log is not served
        return 422, {"message": "the double serves one branch's activity: pass ref"}
    every = await d.fake.list_activities(repo, ref)
    if _query(rq, "direction") == "asc":
        every.reverse()
    per = int(_query(rq, "per_page") or 30)
    # GitHub's example still has the operation's older names (pushed_at, push_type,
    # pusher): the schema's (timestamp, activity_type, actor) take their place.
    example = dict((d.example("GET", C + "/activity") or [{}])[0])
    for old in ("pushed_at", "push_type", "pusher"):
        example.pop(old, None)
    return 200, [
        over(example, a.model_dump(mode="json") | {"actor": _user("Codertocat", "User")})
        for a in every[:per]
    ]


def _entry(d: GitHubHTTP, template: str, e: Any) -> dict[str, Any]:
    example = (d.example(*template.split(" ", 1)).get("tree") or [{}])[0]
    ours = {"path": e.path, "mode": e.mode, "type": e.type, "sha": e.sha}
    entry = over(example, ours | ({"size": e.size} if e.size is not None else {}))
    if e.size is None:
        entry.pop("size", None)  # GitHub gives no size for a subtree
    return entry


def _git_commit(c: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "sha": c.sha,
        "message": c.message,
        "tree": {"sha": c.tree},
        "parents": [{"sha": s} for s in c.parents],
    }
    if c.committed_at is not None:
        body["committer"] = {"date": c.committed_at.isoformat().replace("+00:00", "Z")}
    return body


@route("GET", C + "/git/commits/{commit_sha}")
async def _get_git_commit(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    c = await d.fake.get_git_commit(repo, p["commit_sha"])
    return 200, d.shaped("GET", C + "/git/commits/{commit_sha}", _git_commit(c))


@route("POST", C + "/git/commits")
async def _create_git_commit(
    d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request
) -> Any:
    b = _body(rq)
    c = await d.fake.create_git_commit(
        repo, message=b["message"], tree=b["tree"], parents=b.get("parents", [])
    )
    return 201, d.shaped("POST", C + "/git/commits", _git_commit(c))


@route("GET", C + "/git/trees/{tree_sha}")
async def _get_tree(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    t = await d.fake.get_tree(repo, p["tree_sha"])
    key = "GET " + C + "/git/trees/{tree_sha}"
    tree = [_entry(d, key, e) for e in t.tree]
    return 200, d.shaped("GET", C + "/git/trees/{tree_sha}", {"sha": t.sha, "tree": tree})


@route("POST", C + "/git/trees")
async def _create_tree(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    b = _body(rq)
    entries = [TreeEntry.model_validate(e) for e in b.get("tree", [])]
    t = await d.fake.create_tree(repo, entries, base_tree=b.get("base_tree"))
    tree = [_entry(d, "POST " + C + "/git/trees", e) for e in t.tree]
    body = {"sha": t.sha, "tree": tree, "truncated": False}
    return 201, d.shaped("POST", C + "/git/trees", body)


@route("GET", C + "/git/blobs/{file_sha}")
async def _get_blob(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    blob = await d.fake.get_blob(repo, p["file_sha"])
    # GitHub wraps the base64 at 60 columns; a reader must not assume one line.
    raw = base64.b64encode(blob.content).decode()
    content = "\n".join(raw[i : i + 60] for i in range(0, len(raw), 60)) + "\n"
    ours = {"sha": blob.sha, "content": content, "encoding": "base64", "size": len(blob.content)}
    return 200, d.shaped("GET", C + "/git/blobs/{file_sha}", ours)


@route("POST", C + "/git/blobs")
async def _create_blob(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    b = _body(rq)
    if b.get("encoding", "utf-8") == "base64":
        content = base64.b64decode(b["content"])
    else:
        content = str(b["content"]).encode()
    sha = await d.fake.create_blob(repo, content)
    return 201, d.shaped("POST", C + "/git/blobs", {"sha": sha})


@route("POST", C + "/actions/workflows/{workflow_id}/dispatches")
async def _dispatch(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    b = _body(rq)
    got = await d.fake.dispatch_workflow(repo, p["workflow_id"], b["ref"], b.get("inputs", {}))
    return 200, {"workflow_run_id": got.workflow_run_id, "run_url": "", "html_url": got.html_url}


@route("GET", C + "/actions/workflows/{workflow_id}/runs")
async def _runs(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    runs = await d.fake.list_workflow_runs(repo, p["workflow_id"], status=_query(rq, "status"))
    example = d.example("GET", C + "/actions/workflows/{workflow_id}/runs")
    one = (example.get("workflow_runs") or [{}])[0] if isinstance(example, dict) else {}
    items = [over(one, _run(r)) for r in _page(rq, runs)]
    return 200, {"total_count": len(runs), "workflow_runs": items}


@route("POST", C + "/actions/runs/{run_id}/rerun-failed-jobs")
async def _rerun(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    await d.fake.rerun_failed_jobs(repo, int(p["run_id"]))
    return 201, {}


@route("POST", C + "/actions/runs/{run_id}/cancel")
async def _cancel(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    if not await d.fake.cancel_workflow_run(repo, int(p["run_id"])):
        # https://docs.github.com/en/rest/actions/workflow-runs#cancel-a-workflow-run (409
        # Conflict; GitHub's words: technote-space/auto-cancel-redundant-workflow#68)
        return 409, {"message": CANCEL_FINISHED}
    return 202, {}


def node_id(repo: Repo, number: int) -> str:
    """A PR's GraphQL id as the double hands it out (opaque to clients, like GitHub's)."""
    raw = f"{repo.full_name}#{number}".encode()
    return "PR_" + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _pull(x: Any, repo: Repo) -> dict[str, Any]:
    return {
        "node_id": node_id(repo, x.number),
        "number": x.number,
        "state": x.state,
        "title": x.title,
        "body": x.body,
        "draft": x.draft,
        "merged": x.merged,
        "mergeable": x.mergeable,
        "head": {"ref": x.head.ref, "sha": x.head.sha, **_branch_repo(x.head)},
        "base": {"ref": x.base.ref, "sha": x.base.sha, **_branch_repo(x.base)},
    }


def _branch_repo(b: Any) -> dict[str, Any]:
    if b.repo is None:
        return {}
    return {"repo": {"id": b.repo.id, "full_name": b.repo.full_name}}


@route("GET", C + "/pulls/{pull_number}")
async def _get_pull(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    x = await d.fake.get_pull(repo, int(p["pull_number"]))
    return 200, d.shaped("GET", C + "/pulls/{pull_number}", _pull(x, repo))


@route("GET", C + "/pulls")
async def _list_pulls(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    pulls = await d.fake.list_pulls(
        repo, state=_query(rq, "state") or "open", head=_query(rq, "head")
    )
    example = (d.example("GET", C + "/pulls") or [{}])[0]
    return 200, [over(example, _pull(x, repo)) for x in _page(rq, pulls)]


@route("GET", C + "/pulls/{pull_number}/reviews")
async def _list_reviews(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    reviews = await d.fake.list_reviews(repo, int(p["pull_number"]))
    example = (d.example("GET", C + "/pulls/{pull_number}/reviews") or [{}])[0]
    return 200, [
        over(
            example, {"user": {**example.get("user", {}), "login": r.user.login}, "state": r.state}
        )
        for r in _page(rq, reviews)
        if r.user
    ]


@route("POST", C + "/pulls")
async def _create_pull(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    b = _body(rq)
    x = await d.fake.create_pull(
        repo,
        title=b["title"],
        head=b["head"],
        base=b["base"],
        body=b.get("body", ""),
        draft=bool(b.get("draft")),
    )
    return 201, d.shaped("POST", C + "/pulls", _pull(x, repo))


@route("PATCH", C + "/pulls/{pull_number}")
async def _update_pull(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    b = _body(rq)
    x = await d.fake.update_pull(
        repo, int(p["pull_number"]), title=b.get("title"), body=b.get("body"), state=b.get("state")
    )
    return 200, d.shaped("PATCH", C + "/pulls/{pull_number}", _pull(x, repo))


@route("PUT", C + "/pulls/{pull_number}/merge")
async def _merge(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    b = _body(rq)
    r = await d.fake.merge_pull(
        repo,
        int(p["pull_number"]),
        sha=b["sha"],
        method=b.get("merge_method", "merge"),
        title=b.get("commit_title"),
    )
    return 200, d.shaped(
        "PUT", C + "/pulls/{pull_number}/merge", {"merged": r.merged, "sha": r.sha}
    )


def _check(c: Any) -> dict[str, Any]:
    return {
        "id": c.id,
        "name": c.name,
        "status": c.status,
        "conclusion": c.conclusion,
        "details_url": c.details_url,
        **({"app": {"slug": c.app.slug}} if c.app else {}),
    }


@route("GET", C + "/commits/{ref}/check-runs")
async def _checks(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    runs = await d.fake.list_check_runs(repo, p["ref"])
    example = d.example("GET", C + "/commits/{ref}/check-runs")
    one = (example.get("check_runs") or [{}])[0] if isinstance(example, dict) else {}
    items = [over(one, _check(c)) for c in _page(rq, runs)]
    return 200, {"total_count": len(runs), "check_runs": items}


@route("POST", C + "/check-runs")
async def _create_check(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    b = _body(rq)
    c = await d.fake.create_check_run(
        repo,
        name=b["name"],
        head_sha=b["head_sha"],
        status=b.get("status", "queued"),
        conclusion=b.get("conclusion"),
        details_url=b.get("details_url"),
    )
    return 201, d.shaped("POST", C + "/check-runs", _check(c))


@route("PATCH", C + "/check-runs/{check_run_id}")
async def _update_check(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    b = _body(rq)
    c = await d.fake.update_check_run(
        repo,
        int(p["check_run_id"]),
        status=b.get("status", "completed"),
        conclusion=b.get("conclusion"),
        details_url=b.get("details_url"),
    )
    return 200, d.shaped("PATCH", C + "/check-runs/{check_run_id}", _check(c))


@route("GET", C + "/commits/{ref}/status")
async def _status(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    s = await d.fake.combined_status(repo, p["ref"])
    example = d.example("GET", C + "/commits/{ref}/status")
    one = (example.get("statuses") or [{}])[0] if isinstance(example, dict) else {}
    statuses = [over(one, {"context": x.context, "state": x.state}) for x in s.statuses]
    return 200, d.shaped(
        "GET",
        C + "/commits/{ref}/status",
        {"state": s.state, "total_count": s.total_count, "statuses": statuses},
    )


DOWNLOAD_HOST = "productionresultssa0.blob.core.windows.net"  # where GitHub's 302 points
SIGNATURE = "sig=s3cr3t-signature"  # the download URL is its own credential


@route("GET", C + "/actions/jobs/{job_id}/logs")
async def _job_log(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    # GitHub answers 302 Found, Location: a short-lived signed URL on another host.
    if int(p["job_id"]) not in d.fake.world(repo).job_logs:
        return 404, {"message": "Not Found"}
    where = f"https://{DOWNLOAD_HOST}/actions-results/{repo.owner}/{repo.name}/{p['job_id']}"
    return httpx.Response(302, headers={"Location": f"{where}/logs.txt?{SIGNATURE}&se=1"})


def download(d: GitHubHTTP, request: httpx.Request) -> httpx.Response:
    """The signed URL's host: serves the log to whoever holds the signature, nobody else."""
    parts = request.url.path.strip("/").split("/")
    if len(parts) != 5 or parts[0] != "actions-results" or SIGNATURE not in str(request.url):
        return httpx.Response(403, text="AuthenticationFailed")
    log = d.fake.world(f"{parts[1]}/{parts[2]}").job_logs.get(int(parts[3]))
    if log is None:
        return httpx.Response(404, text="BlobNotFound")
    return httpx.Response(200, content=log.encode(), headers={"Content-Type": "text/plain"})


def _jwt_refused(d: GitHubHTTP, rq: httpx.Request) -> tuple[int, dict[str, str]] | None:
    """GitHub's answer to an App JWT it cannot verify, or None when it verifies (or the
    double was not told the App's key)."""
    if d.app is None:
        return None
    app_id, public_pem = d.app
    refused = (401, {"message": "A JSON web token could not be decoded"})
    token = rq.headers.get("authorization", "").removeprefix("Bearer ").removeprefix("bearer ")
    parts = token.split(".")
    if len(parts) != 3:
        return refused
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding, rsa
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    def b64(text: str) -> bytes:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

    key = load_pem_public_key(public_pem.encode())
    if not isinstance(key, rsa.RSAPublicKey):
        return refused
    try:
        key.verify(
            b64(parts[2]), f"{parts[0]}.{parts[1]}".encode(), padding.PKCS1v15(), hashes.SHA256()
        )
        claims = json.loads(b64(parts[1]))
    except (InvalidSignature, ValueError):
        return refused
    if str(claims.get("iss")) not in {app_id, d.client_id or app_id}:
        return 401, {"message": "'Issuer' claim ('iss') must be an Integer"}
    return None


@route("GET", C + "/installation")
async def _installation(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    if (refused := _jwt_refused(d, rq)) is not None:
        return refused
    w = d.fake.world(repo)
    if not w.installed:
        return 404, {"message": "Not Found"}
    out = d.shaped("GET", C + "/installation", {"id": 1, "app_slug": "magi-app"})
    if w.granted is not None:
        out["permissions"] = dict(w.granted)  # replaced whole: GitHub lists what it granted
    out["suspended_at"] = "2026-01-01T00:00:00Z" if w.suspended else None
    return 200, out


@route("POST", "/app/installations/{installation_id}/access_tokens")
async def _token(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    if (refused := _jwt_refused(d, rq)) is not None:
        return refused
    d.tokens_minted += 1
    ours = {"token": f"ghs_test{d.tokens_minted}", "expires_at": "2099-01-01T00:00:00Z"}
    return 201, d.shaped("POST", "/app/installations/{installation_id}/access_tokens", ours)


@route("POST", "/app-manifests/{code}/conversions")
async def _conversion(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    """The manifest flow's exchange: a code GitHub gave once, for one hour."""
    made = d.manifest_codes.pop(p["code"], None)
    if made is None:
        return 404, {"message": "Not Found"}
    return 201, made


@route("GET", "/app")
async def _app(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    if (refused := _jwt_refused(d, rq)) is not None:
        return refused
    out = d.shaped(
        "GET",
        "/app",
        {"slug": "magi-app", "id": int(d.app[0]) if d.app and d.app[0].isdigit() else 1},
    )
    if d.app_permissions is not None:
        out["permissions"] = dict(d.app_permissions)
    if d.app_side.events is not None:  # what the App subscribes to (github_app_routes)
        out["events"] = list(d.app_side.events)
    return 200, out


# -- publishing and progress (issue 14) ---------------------------------------------------
# GitHub's description has no example for POST/GET /issues in the subset shipped here; both
# answer the same `issue` schema as GET /issues/{n}, so that example gives their shape.
ISSUE_SHAPE = C + "/issues/{issue_number}"


@route("POST", C + "/issues")
async def _create_issue(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    b = _body(rq)
    labels = [x if isinstance(x, str) else x.get("name", "") for x in b.get("labels", [])]
    i = await d.fake.create_issue(repo, title=b["title"], body=b.get("body") or "", labels=labels)
    return 201, d.shaped("GET", ISSUE_SHAPE, _issue(i))


@route("GET", C + "/issues")
async def _list_issues(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    if (_query(rq, "state") or "open") != "all":
        return 422, {"message": "the double serves state=all only (what magi asks)"}
    labels = [x for x in (_query(rq, "labels") or "").split(",") if x]
    every = await d.fake.list_issues(repo, labels=labels)
    page, per = int(_query(rq, "page") or 1), int(_query(rq, "per_page") or 30)
    example = d.example("GET", ISSUE_SHAPE)
    return 200, [over(example, _issue(i)) for i in every[(page - 1) * per : page * per]]


def _run(r: Any) -> dict[str, Any]:
    return {
        "id": r.id,
        "status": r.status,
        "conclusion": r.conclusion,
        "display_title": r.display_title,
        "path": r.path,
        "event": r.event,
        "html_url": r.html_url or f"https://github.example/actions/runs/{r.id}",
        "head_sha": r.head_sha,
        "head_repository": r.head_repository.model_dump() if r.head_repository else None,
    }


@route("GET", C + "/actions/runs/{run_id}")
async def _get_run(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    r = await d.fake.get_workflow_run(repo, int(p["run_id"]))
    return 200, d.shaped("GET", C + "/actions/runs/{run_id}", _run(r))


def _job(j: Any, run_id: int) -> dict[str, Any]:
    def when(t: Any) -> str | None:
        return t.isoformat().replace("+00:00", "Z") if t is not None else None

    return {
        "id": j.id,
        "run_id": run_id,
        "name": j.name,
        "status": j.status,
        "conclusion": j.conclusion,
        "html_url": j.html_url,
        "started_at": when(j.started_at),
        "completed_at": when(j.completed_at),
        "runner_name": j.runner_name,
        "steps": [
            {"name": s.name, "status": s.status, "conclusion": s.conclusion, "number": n}
            for n, s in enumerate(j.steps, 1)
        ],
    }


@route("GET", C + "/actions/runs/{run_id}/jobs")
async def _run_jobs(d: GitHubHTTP, repo: Repo, p: dict[str, str], rq: httpx.Request) -> Any:
    run_id = int(p["run_id"])
    every = await d.fake.list_run_jobs(repo, run_id)
    page, per = int(_query(rq, "page") or 1), int(_query(rq, "per_page") or 30)
    example = d.example("GET", C + "/actions/runs/{run_id}/jobs")
    one = (example.get("jobs") or [{}])[0] if isinstance(example, dict) else {}
    jobs = [over(one, _job(j, run_id)) for j in every[(page - 1) * per : page * per]]
    return 200, {"total_count": len(every), "jobs": jobs}
