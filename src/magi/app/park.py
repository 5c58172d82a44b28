"""``GET /park/<owner>/<repo>/<run>``: whether a writer's ``/magi stop`` asked run ``run`` to
park (``magi.core.person.park``).

An agents job asks this at each node boundary, with the run's park key in a header: it holds
no credential, so it cannot read ``refs/magi/park/<run>`` itself. The key is checked before
anything else, so a stranger's request costs no call to GitHub. The answer is one bit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timedelta

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from magi.app.context import AppContext
from magi.core.person.park import HEADER, key_ok, park_ref, repo_of
from magi.github.models import Repo
from magi.github.port import GitHubError
from magi.state.store import RUN_ID

# A key sits in the job's log, which is public on a public repository, so every answer is
# kept a while and repeated questions cost GitHub one read per run at most this often: a
# "no" for PARK_TTL (a stale "no" parks the run a boundary later at most), a "yes" (with the
# park ref's sha) and GitHub's failure to answer for READ_EVERY. A "yes" is forgotten at
# once when this App withdraws the park (a retry, an answer: ``AppContext.forget_park``);
# one another replica withdrew is believed for READ_EVERY at most.
PARK_TTL = timedelta(seconds=20)
READ_EVERY = timedelta(seconds=5)
PARKS_KEPT = 4096


def _answer(status: int, **body: object) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers={"Cache-Control": "no-store"})


def route(context: Callable[[], AppContext]) -> Route:
    """The route, reading the App's context when asked (the App learns its login late)."""

    # Questions that arrive while a read is under way wait for it: not one read each.
    reading: dict[tuple[str, str], asyncio.Task[tuple[bool | None, datetime, str]]] = {}

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
        if (hit := ctx.parks.get(known)) is None or hit[1] <= now:
            if (task := reading.get(known)) is None:
                task = reading[known] = asyncio.ensure_future(_read(ctx, repo, run_id, now))
                task.add_done_callback(lambda _t: reading.pop(known, None))
            hit = await asyncio.shield(task)
            ctx.parks[known] = hit
            while len(ctx.parks) > PARKS_KEPT:
                ctx.parks.pop(next(iter(ctx.parks)))
        if hit[0] is None:
            return _answer(502, error="GitHub did not answer; ask again at the next boundary")
        return _answer(200, park=hit[0])

    return Route("/park/{owner}/{repo}/{run}", park, methods=["GET"])


async def _read(
    ctx: AppContext, repo: Repo, run_id: str, now: datetime
) -> tuple[bool | None, datetime, str]:
    """One read of ``refs/magi/park/<run>``, logged; what to answer until when."""
    extra = {"repo": repo.full_name, "step": f"park {run_id}"}
    try:
        gh = await ctx.ports(None, repo)
        asked = await gh.get_ref(repo, park_ref(run_id))
    except GitHubError as exc:
        ctx.log.warning(
            "park: GitHub did not answer", extra={**extra, "outcome": exc.message[:200]}
        )
        return None, now + READ_EVERY, ""
    if asked is None:
        ctx.log.info("park: read", extra={**extra, "outcome": "no"})
        return False, now + PARK_TTL, ""
    ctx.log.info("park: read", extra={**extra, "outcome": f"yes {asked.sha[:12]}"})
    return True, now + READ_EVERY, asked.sha
