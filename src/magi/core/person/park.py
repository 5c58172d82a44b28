"""``/magi stop`` on a runner: the run parks at its next node boundary (seed 000, "Stop,
replace the binary, resume").

GitHub's cancel gives a job about ten seconds before it kills it: far too short for a seat's
turn to finish, so a cancel pays the seats in flight again on resume. A park lets them finish.
The agents job holds no credential and reaches no person, so the request has to come to it:

- the App records the request in the repository, ``refs/magi/park/<run>`` (it keeps no state
  of its own), when a writer comments ``/magi stop``;
- the agents job asks the App, at each node boundary, whether its run is to park:
  ``GET <public url>/park/<owner>/<repo>/<run>`` with the run's *park key* in a header;
- the App answers from that ref.

The park key is what the App hands the job with the dispatch (the ``park`` input, JSON
``{"url": ..., "key": ...}``). It is no credential: it lets its holder learn one bit, whether a
park was asked for that run of that repository, and nothing else; a key for one run is no key
for another. It only keeps strangers from making the App spend GitHub calls on their behalf.
It is an HMAC under a key derived from the App's marker key (domain-separated, so a park key
is never a marker's MAC), so the App and the publish job (which forwards the input to a run's
next stage) need nothing new to hold.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from dataclasses import dataclass
from ipaddress import ip_address

from magi.core.threads.markers import Seal

KEY_HEX = 32
HEADER = "X-Magi-Park-Key"
# What the App's answer may be: bounded, so a hostile endpoint cannot feed the job megabytes.
ANSWER_MAX = 4096
# The reason a run parked on a writer's ``/magi stop`` gives (the App names nobody to the job).
WHY = "/magi stop on the issue"

_OWNER = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")
_NAME = re.compile(r"[A-Za-z0-9._-]{1,100}")
_KEY = re.compile(rf"[0-9a-f]{{{KEY_HEX}}}")
_LOOPBACK = {"localhost"}
# scheme://host[:port][/path], no credentials, query or fragment (core reads no URL library)
_URL = re.compile(
    r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://"
    r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(?P<port>[0-9]{1,5}))?"
    r"(?P<path>/[^?#\s]*)?"
)


def park_ref(run_id: str) -> str:
    """The ref whose existence says "park run ``run_id``" (``create_ref``/``get_ref`` form)."""
    return f"refs/magi/park/{run_id}"


def park_key(seal: Seal, repo: str, run_id: str) -> str:
    """The key that lets a job of run ``run_id`` of ``repo`` ask whether it is to park."""
    derived = hmac.new(seal.key, b"magi park key v1", hashlib.sha256).digest()
    message = "\0".join((repo.lower(), run_id)).encode()
    return hmac.new(derived, message, hashlib.sha256).hexdigest()[:KEY_HEX]


def key_ok(seal: Seal, repo: str, run_id: str, given: str | None) -> bool:
    """Whether ``given`` is that run's park key (compared in constant time)."""
    if not given or not _KEY.fullmatch(given):  # compare_digest refuses non-ASCII str
        return False
    return hmac.compare_digest(park_key(seal, repo, run_id), given)


def path_of(repo: str, run_id: str) -> str:
    """The App's path a job of run ``run_id`` asks (``/park/<owner>/<repo>/<run>``)."""
    return f"/park/{repo}/{run_id}"


def repo_of(owner: str, name: str) -> str | None:
    """``owner/name`` when both are shaped as GitHub allows, else None."""
    if _OWNER.fullmatch(owner) and _NAME.fullmatch(name) and name not in {".", ".."}:
        return f"{owner}/{name}"
    return None


def _loopback(host: str) -> bool:
    if host in _LOOPBACK:
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


def public_url_problem(url: str) -> str | None:
    """Why ``url`` cannot be the App's public address (https, or http on loopback only),
    or None when it can."""
    m = _URL.fullmatch(url)
    if m is None:
        if "@" in url or "?" in url or "#" in url:
            return f"{url!r} carries a query, fragment or credentials: give the bare address"
        return f"{url!r} is not an http(s) URL"
    scheme, host = m["scheme"].lower(), m["host"].strip("[]").lower()
    if scheme not in {"http", "https"}:
        return f"{url!r} is not an http(s) URL"
    if scheme == "http" and not _loopback(host):
        return f"{url!r} is plain http: the App's public address is https (http on loopback only)"
    return None


def _path(url: str) -> str:
    m = _URL.fullmatch(url)
    return (m["path"] or "") if m else ""


@dataclass(frozen=True)
class Channel:
    """Where a job asks whether its run is to park, and the key it asks with."""

    url: str
    key: str

    def to_input(self) -> str:
        """The workflow's ``park`` input."""
        return json.dumps({"url": self.url, "key": self.key}, separators=(",", ":"))


def channel(public_url: str, seal: Seal, repo: str, run_id: str) -> Channel:
    """The channel the App hands a job of run ``run_id`` with its dispatch."""
    return Channel(public_url.rstrip("/") + path_of(repo, run_id), park_key(seal, repo, run_id))


class BadChannel(ValueError):
    """The ``park`` input is not a channel this job may ask."""


def read_channel(text: str, repo: str, run_id: str) -> Channel:
    """The ``park`` input, checked: JSON ``{"url", "key"}``, the URL the App's address for
    exactly this repository's run ``run_id`` (a channel for another run is refused, so a
    stage cannot be pointed at another run's answer), the key the key's shape."""
    try:
        data = json.loads(text)
    except ValueError:
        raise BadChannel("the park input is not JSON") from None
    if not isinstance(data, dict) or set(data) != {"url", "key"}:
        raise BadChannel('the park input is not {"url": ..., "key": ...}')
    url, key = data["url"], data["key"]
    if not isinstance(url, str) or not isinstance(key, str) or not _KEY.fullmatch(key):
        raise BadChannel("the park input's url or key is not one")
    problem = public_url_problem(url)
    if problem is not None:
        raise BadChannel(f"the park input's url: {problem}")
    if not _path(url).endswith(path_of(repo, run_id)):
        raise BadChannel(f"the park input's url is not for run {run_id} of {repo}")
    return Channel(url, key)


def read_answer(body: bytes) -> bool:
    """The App's answer: ``{"park": true|false}``; anything else is a ``ValueError``."""
    if len(body) > ANSWER_MAX:
        raise ValueError(f"an answer of {len(body)} bytes (at most {ANSWER_MAX})")
    data = json.loads(body.decode("utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("park"), bool):
        raise ValueError('not {"park": true|false}')
    return bool(data["park"])
