"""``GET /park/<owner>/<repo>/<run>``: whether a writer's ``/magi stop`` asked run ``run`` to
park (``magi.core.person.park``).

An agents job asks this at each node boundary, with the run's park key in a header: it holds
no credential, so it cannot read ``refs/magi/park/<run>`` itself. The key is checked before
anything else, so a stranger's request costs no call to GitHub. The answer is one bit.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from magi.app.context import AppContext
from magi.core.person.park import HEADER, key_ok, park_ref, repo_of
from magi.github.models import Repo
from magi.github.port import GitHubError
from magi.state.store import RUN_ID

# A key sits in the job's log, which is public on a public repository: a "no" is answered
# from memory for this long, so repeated questions cost GitHub one call per run per PARK_TTL.
PARK_TTL = timedelta(seconds=20)
PARKS_KEPT = 4096


def _answer(status: int, **body: object) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers={"Cache-Control": "no-store"})


def route(context: Callable[[], AppContext]) -> Route:
    """The route, reading the App's context when asked (the App learns its login late)."""

    async def park(request: Request) -> JSONResponse:
        ctx = context()
        owner, name = request.path_params["owner"], request.path_params["repo"]
        run_id = request.path_params["run"]
        full = repo_of(owner, name)
        if full is None or not RUN_ID.fullmatch(run_id):
            return _answer(404, error="no such run")
        if not key_ok(ctx.seal, full, run_id, request.headers.get(HEADER)):
            return _answer(403, error="not this run's park key")
        repo = Repo(owner=owner, name=name)
        known = (full.lower(), run_id)
        now = ctx.clock()
        if (hit := ctx.parks.get(known)) is not None and hit[1] > now:
            return _answer(200, park=hit[0])
        try:
            gh = await ctx.ports(None, repo)
            asked = await gh.get_ref(repo, park_ref(run_id))
        except GitHubError as exc:
            ctx.log.warning(
                "park: GitHub did not answer",
                extra={"repo": full, "step": "park", "outcome": exc.message[:200]},
            )
            return _answer(502, error="GitHub did not answer; ask again at the next boundary")
        if asked is None:
            # Only a "no" is kept: a stale "no" parks the run one boundary later at most,
            # a stale "yes" (another replica withdrew it for a retry) would park a resumed
            # run at once.
            ctx.parks[known] = (False, now + PARK_TTL)
            while len(ctx.parks) > PARKS_KEPT:
                ctx.parks.pop(next(iter(ctx.parks)))
        return _answer(200, park=asked is not None)

    return Route("/park/{owner}/{repo}/{run}", park, methods=["GET"])
