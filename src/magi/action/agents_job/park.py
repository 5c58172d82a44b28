"""The agents job asks the App, at each node boundary, whether a writer's ``/magi stop`` asked
its run to park (``magi.core.person.park``).

The job holds no credential: it asks with the run's park key, which reads one bit. The
question is plain HTTPS from magi's own process, never from a seat (the key is not in any
seat's environment: seats get an allowlist). An App that does not answer, or answers
anything but ``{"park": true|false}``, is said once in the job's log and the run goes on: a
lost stop is a run that finishes, never a run that dies.
"""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping

from magi.core.person.park import HEADER, WHY, BadChannel, Channel, read_answer, read_channel

ENV = "MAGI_PARK"
TIMEOUT = 10.0


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """The key goes to the address the App gave and nowhere else: a redirect is an error."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def _ask(channel: Channel) -> bool:
    request = urllib.request.Request(  # noqa: S310 - http(s) only, checked by read_channel
        channel.url, headers={HEADER: channel.key, "Accept": "application/json"}, method="GET"
    )
    # The scheme is http(s) only: read_channel checked the URL before it became a channel.
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=TIMEOUT) as answer:
            return read_answer(answer.read(4097))
    except urllib.error.HTTPError as exc:
        exc.close()  # its response, not left for the collector
        raise


def _within(seconds: float, ask: Callable[[], bool]) -> bool:
    """``ask()``, given ``seconds`` in all: a socket's timeout is per read, and an App that
    drips its answer a byte at a time would hold the run's boundary for hours. A question
    still out when time is up is left to end on its own (a daemon thread; it changes
    nothing when it does)."""
    got: list[bool] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            got.append(ask())
        except BaseException as exc:
            failed.append(exc)

    worker = threading.Thread(target=run, name="magi-park-ask", daemon=True)
    worker.start()
    worker.join(seconds)
    if failed:
        raise failed[0]
    if not got:
        raise TimeoutError(f"no whole answer within {seconds:.0f} s")
    return got[0]


class AppPark:
    """``Store(remote_park=...)``: asks the App for run ``run_id``; notes trouble once."""

    def __init__(self, channel: Channel, run_id: str, note: Callable[[str, str], None]) -> None:
        self.channel = channel
        self.run_id = run_id
        self.note = note
        self.said = False

    def __call__(self, run_id: str) -> str | None:
        if run_id != self.run_id:  # the channel is this run's alone
            return None
        try:
            return WHY if _within(TIMEOUT, lambda: _ask(self.channel)) else None
        except Exception as exc:
            if not self.said:
                self.said = True
                if isinstance(exc, urllib.error.HTTPError):
                    why: object = f"HTTP {exc.code} {exc.reason}"
                elif isinstance(exc, urllib.error.URLError):
                    why = exc.reason
                else:
                    why = exc
                self.note(
                    f"could not ask the App whether to park ({str(why)[:200]}): going on; "
                    "a `/magi stop` is honoured at a later boundary if the App answers then",
                    "warn",
                )
            return None


def from_environ(
    environ: Mapping[str, str], repo: str, run_id: str | None, note: Callable[[str, str], None]
) -> AppPark | None:
    """The job's park question, from the dispatch's ``park`` input (``MAGI_PARK``): None
    without one (a workflow without the App, or an App without ``MAGI_PUBLIC_URL``). A
    ``park`` input that is not this run's channel is said, and not asked."""
    text = environ.get(ENV, "").strip()
    if not text or not run_id or not repo:
        return None
    try:
        return AppPark(read_channel(text, repo, run_id), run_id, note)
    except BadChannel as exc:
        note(f"{exc}: a `/magi stop` will not reach this run; `/magi stop now` cancels it", "warn")
        return None
