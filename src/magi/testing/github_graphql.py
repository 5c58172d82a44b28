"""A narrow GraphQL double: exactly the three mutations and the one query magi sends.

GitHub's REST API cannot change a pull request's draft state (``PATCH /pulls/{n}`` ignores
``draft``), so the githubkit adapter's ``set_draft`` posts one GraphQL mutation to
``POST /graphql`` (``/api/graphql`` on GHES), which is not a REST operation and so not in
``operations.tsv``. This is not a GraphQL server: it recognises only

    markPullRequestReadyForReview(input: {pullRequestId: $id}) { pullRequest { ... } }
    convertPullRequestToDraft(input: {pullRequestId: $id}) { pullRequest { ... } }

    query { repository(owner: $o, name: $n) { pullRequest(number: $p) { mergeCommit { oid } } } }
    enqueuePullRequest(input: {pullRequestId: $id, expectedHeadOid: $oid})

(the merge commit REST 2026-03-10 no longer gives; a merge queue takes a PR only by the
mutation), with the values in the variables, acts on the ``FakeGitHub`` behind the HTTP
double, and answers the documented payload (``pullRequest`` with ``number`` and
``isDraft``; ``mergeQueueEntry`` with ``position`` and ``state``). An id it did not hand out
is GitHub's ``NOT_FOUND`` error, with HTTP 200 as GraphQL answers errors; a draft the
repository cannot hold (``magi.testing.github.drafts_refused``) is refused alike.
Any other query is an unanswered request that fails the test, like a stray REST route.
https://docs.github.com/en/graphql/reference/mutations#markpullrequestreadyforreview
https://docs.github.com/en/graphql/reference/mutations#convertpullrequesttodraft
https://docs.github.com/en/graphql/reference/objects#pullrequest
https://docs.github.com/en/graphql/guides/forming-calls-with-graphql
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import TYPE_CHECKING, Any

import httpx

from magi.github.models import Repo
from magi.github.port import GitHubError

if TYPE_CHECKING:
    from magi.testing.github_http import GitHubHTTP

PATHS = frozenset({"/graphql", "/api/graphql"})
MUTATIONS = {"markPullRequestReadyForReview": False, "convertPullRequestToDraft": True}
_FIELD = re.compile(
    r"^\s*mutation\b[^{]*\{\s*(\w+)\s*\(\s*input\s*:\s*\{\s*pullRequestId\s*:\s*\$(\w+)\s*\}\s*\)"
)

_MERGE_COMMIT = re.compile(
    r"^\s*query\b[^{]*\{\s*repository\s*\(\s*owner\s*:\s*\$(\w+)\s*,\s*name\s*:\s*\$(\w+)\s*\)"
    r"\s*\{\s*pullRequest\s*\(\s*number\s*:\s*\$(\w+)\s*\)\s*\{\s*mergeCommit\s*\{\s*oid\s*\}"
    r"\s*\}\s*\}\s*\}\s*$"
)


def pull_of(node: str) -> tuple[Repo, int] | None:
    """The repository and number behind a node id from ``github_routes.node_id``."""
    if not node.startswith("PR_"):
        return None
    raw = node[3:] + "=" * (-len(node[3:]) % 4)
    try:
        text = base64.urlsafe_b64decode(raw).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    full, _, number = text.rpartition("#")
    if "/" not in full or not number.isdigit():
        return None
    return Repo.parse(full), int(number)


def _not_found(field: str, node: str) -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "data": {field: None},
            "errors": [
                {
                    "type": "NOT_FOUND",
                    "path": [field],
                    "locations": [{"line": 2, "column": 3}],
                    "message": f"Could not resolve to a node with the global id of '{node}'",
                }
            ],
        },
    )


# https://docs.github.com/en/graphql/reference/mutations#enqueuepullrequest
_ENQUEUE = re.compile(
    r"^\s*mutation\b[^{]*\{\s*enqueuePullRequest\s*\(\s*input\s*:\s*\{\s*"
    r"pullRequestId\s*:\s*\$(\w+)\s*,\s*expectedHeadOid\s*:\s*\$(\w+)\s*\}\s*\)"
)


async def _enqueue(
    double: GitHubHTTP, match: re.Match[str], variables: dict[str, Any]
) -> httpx.Response:
    """``enqueuePullRequest``: the PR into its merge queue; GitHub's error when it will not."""
    field, node = "enqueuePullRequest", str(variables.get(match[1], ""))
    found = pull_of(node)
    if found is None or found[1] not in double.fake.world(found[0]).pulls:
        return _not_found(field, node)
    try:
        position = await double.fake.enqueue_pull(
            found[0], found[1], sha=str(variables.get(match[2], ""))
        )
    except GitHubError as exc:
        error = {"type": "UNPROCESSABLE", "path": [field], "message": exc.message}
        return httpx.Response(200, json={"data": {field: None}, "errors": [error]})
    entry = {"position": position, "state": "QUEUED"}
    return httpx.Response(200, json={"data": {field: {"mergeQueueEntry": entry}}})


async def answer(double: GitHubHTTP, request: httpx.Request) -> httpx.Response:
    """The answer to one ``POST /graphql``; see the module docstring."""
    body = json.loads(request.content or b"{}")
    query = str(body.get("query", "")) if isinstance(body, dict) else ""
    variables = (body.get("variables") or {}) if isinstance(body, dict) else {}
    if (asked := _MERGE_COMMIT.match(query)) is not None:
        return await _merge_commit(double, asked, variables)
    queue = _ENQUEUE.match(query)
    if queue is not None:
        return await _enqueue(double, queue, variables)
    match = _FIELD.match(query)
    if match is None or match[1] not in MUTATIONS:
        double.unanswered.append(f"POST /graphql {query[:60]!r}")
        raise AssertionError(f"the GraphQL double serves only {sorted(MUTATIONS)}")
    field, var = match[1], match[2]
    node = str(variables.get(var, ""))
    found = pull_of(node)
    if found is None or found[1] not in double.fake.world(found[0]).pulls:
        return _not_found(field, node)
    repo, number = found
    try:
        pull = await double.fake.set_draft(repo, number, MUTATIONS[field])
    except GitHubError as exc:  # a draft refused (private, Free or Pro): 200 with `errors`
        error = {"type": "UNPROCESSABLE", "path": [field], "message": exc.message}
        return httpx.Response(200, json={"data": {field: None}, "errors": [error]})
    payload: dict[str, Any] = {"pullRequest": {"number": pull.number, "isDraft": pull.draft}}
    return httpx.Response(200, json={"data": {field: payload}})


async def _merge_commit(double: GitHubHTTP, asked: re.Match[str], variables: Any) -> httpx.Response:
    """``repository.pullRequest.mergeCommit``: null while unmerged, NOT_FOUND for no PR."""
    owner, name = str(variables.get(asked[1], "")), str(variables.get(asked[2], ""))
    number = variables.get(asked[3])
    repo = Repo(owner=owner, name=name)
    try:
        oid = await double.fake.merge_commit(repo, int(number))
    except (GitHubError, TypeError, ValueError):
        error = {
            "type": "NOT_FOUND",
            "path": ["repository", "pullRequest"],
            "message": f"Could not resolve to a PullRequest with the number of {number}.",
        }
        return httpx.Response(
            200, json={"data": {"repository": {"pullRequest": None}}, "errors": [error]}
        )
    commit = {"oid": oid} if oid else None
    return httpx.Response(
        200, json={"data": {"repository": {"pullRequest": {"mergeCommit": commit}}}}
    )
