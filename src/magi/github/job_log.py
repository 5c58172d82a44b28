"""A GitHub Actions job's log, its tail only, fetched without leaking the token or the URL.

``GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs`` answers ``302`` with ``Location``:
a signed download URL on another host (blob storage) that works for anyone holding it,
for about a minute. So the redirect is followed here by hand, never by httpx:

- the token goes to GitHub's API only: the download request is built fresh, with no
  ``Authorization`` (httpx would strip it across hosts too, but magi does not rely on it;
  the URL is its own credential, so no host gets the token, GitHub's own included);
- the URL is never logged nor put in an error: httpx's client logs every URL it requests
  at INFO, so the download goes straight to a transport, around the client;
- only ``https`` is followed, and only the last ``max_bytes`` are kept while reading.

404 and 410 (no log kept, or expired) are answers: None. Anything else is a ``GitHubError``
naming the job, never the URL.
https://docs.github.com/en/rest/actions/workflow-jobs#download-job-logs-for-a-workflow-run
"""

from __future__ import annotations

from typing import Any

import httpx
from githubkit import GitHub

from magi.github.models import Repo
from magi.github.port import API_VERSION, GitHubError

__all__ = ["DOWNLOAD_TIMEOUT", "job_log_tail"]

DOWNLOAD_TIMEOUT = httpx.Timeout(30.0)


async def job_log_tail(gh: GitHub[Any], repo: Repo, job_id: int, *, max_bytes: int) -> str | None:
    """The last ``max_bytes`` of job ``job_id``'s log (see the module docstring)."""
    path = f"/repos/{repo.owner}/{repo.name}/actions/jobs/{job_id}/logs"
    async with gh.get_async_client() as client:
        request = client.build_request("GET", path, headers={"X-GitHub-Api-Version": API_VERSION})
        try:
            answer = await client.send(request, follow_redirects=False)
        except httpx.HTTPError as exc:
            raise GitHubError(
                f"no answer from GitHub for job {job_id}'s log: {type(exc).__name__}",
                transient=True,
            ) from None
    if answer.status_code in (404, 410):
        return None
    location = answer.headers.get("location", "")
    if answer.status_code not in (301, 302, 303, 307) or not location:
        raise GitHubError(
            f"job {job_id}'s log: GitHub answered {answer.status_code}, not a redirect",
            status=answer.status_code,
            transient=answer.status_code >= 500,
        )
    try:
        url = httpx.URL(location)
    except (httpx.InvalidURL, TypeError, ValueError):
        # the message quotes the URL, a credential: name the job only
        raise GitHubError(
            f"job {job_id}'s log: the download URL is malformed; not followed"
        ) from None
    if url.scheme != "https":
        raise GitHubError(f"job {job_id}'s log: the download is not https; not followed")
    return await _download(url, job_id, max_bytes, gh.config.async_transport)


async def _download(
    url: httpx.URL, job_id: int, max_bytes: int, transport: httpx.AsyncBaseTransport | None
) -> str:
    own = transport is None
    t = transport or httpx.AsyncHTTPTransport(retries=1)
    request = httpx.Request(
        "GET",
        url,
        headers={"Accept": "text/plain", "User-Agent": "magi"},
        extensions={"timeout": DOWNLOAD_TIMEOUT.as_dict()},
    )
    kept = bytearray()
    try:
        response = await t.handle_async_request(request)
        try:
            if response.status_code != 200:
                raise GitHubError(
                    f"job {job_id}'s log: the download answered {response.status_code}",
                    status=response.status_code,
                    transient=response.status_code >= 500,
                )
            async for chunk in response.aiter_bytes():
                kept += chunk
                if len(kept) > max_bytes:
                    del kept[:-max_bytes]
        finally:
            await response.aclose()
    except httpx.HTTPError as exc:
        raise GitHubError(
            f"job {job_id}'s log: the download failed ({type(exc).__name__})", transient=True
        ) from None
    finally:
        if own:
            await t.aclose()
    return bytes(kept).decode("utf-8", "replace")
