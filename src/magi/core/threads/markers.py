"""Hidden markers in magi's own comments and PR bodies: how a stateless App finds its state.

The App keeps nothing in memory. What it must remember (which run an issue started, which
workflow run carries it, which ``merge`` comment approved which SHA, which refusal it has
already said) is written into its own comments as an HTML comment
``<!-- magi:KIND k=v ... mac=... -->`` and read back from the issue's comments, so two
replicas and a restart see the same thing.

A marker is only as good as nobody else being able to write one. Reading only the comments
magi wrote is not enough: magi quotes other people's words (a command line, a check's name,
a review), and one unescaped echo put a stranger's ``approval`` marker into a comment of
magi's own, which then merged a PR. So every marker is sealed: its last field ``mac`` is an
HMAC over its kind and fields, keyed by a secret only magi holds (derived from the App's
private key, which the App and the workflow's publishing jobs both have), and a ``Seal``
reads only markers whose MAC verifies. ``Seal.clean`` is the last door before GitHub: any
``<!-- magi:`` in a body that is not a whole marker sealed by this key is escaped, so even a
missed echo shows the forged text instead of hiding it.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = [
    "APPROVAL",
    "GATE",
    "PR",
    "REFUSAL",
    "RUN",
    "TRACKING",
    "Seal",
]

_MARKER = re.compile(r"<!--\s*magi:([a-z-]+)((?:\s+[a-z_-]+=[^\s>]*)*)\s*-->")
_PAIR = re.compile(r"([a-z_-]+)=([^\s>]*)")
_VALUE = re.compile(r"^[A-Za-z0-9._/:#-]*$")
_OPENING = re.compile(r"<!--(\s*)magi:", re.IGNORECASE)
_PEM_LINE = re.compile(r"-----(?:BEGIN|END)[^-]*-----")
MAC = "mac"
MAC_HEX = 32  # 128 bits of HMAC-SHA256: far past guessing, short enough to read past

RUN = "run"  # the acknowledgement of a labeled issue: run=, issue=, workflow_run=
APPROVAL = "approval"  # a merge comment accepted: comment=, sha=, login=
GATE = "gate"  # a refusal said once: approval=, reason=, sha=
PR = "pr"  # in a magi PR's body: issue=, run=
REFUSAL = "refusal"  # any other reply said once: key=
TRACKING = "tracking"  # the issue's tracking comment (publish, the App): issue=, run=, spent=
PIN = "pin"  # a claim commit's message: issue=, digest= (sha256 of the pinned issue text)


def _message(kind: str, pairs: Iterable[tuple[str, str]]) -> bytes:
    return "\0".join([kind, *(f"{k}={v}" for k, v in pairs)]).encode()


@dataclass(frozen=True)
class Seal:
    """Writes and reads markers under one key; a marker without a valid MAC does not exist."""

    key: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if len(self.key) < 16:
            raise ValueError("a marker key must have at least 16 bytes")

    @classmethod
    def from_private_key(cls, pem: str) -> Seal:
        """The seal of the App whose private key is ``pem``.

        The key is an HMAC of the PEM's base64 body (header, footer and every kind of line
        break removed, literal ``\\n`` included), so the App's environment variable and the
        workflow's secret, holding the same file GitHub gave, give the same key however each
        was pasted. The private key cannot be recovered from it.
        """
        body = re.sub(r"\s|\\n", "", _PEM_LINE.sub("", pem.replace("\\n", "\n")))
        if not body:
            raise ValueError("the App private key is empty: no key to seal magi's markers")
        return cls(hmac.new(b"magi markers v1", body.encode(), hashlib.sha256).digest())

    def _mac(self, kind: str, pairs: Iterable[tuple[str, str]]) -> str:
        return hmac.new(self.key, _message(kind, pairs), hashlib.sha256).hexdigest()[:MAC_HEX]

    def marker(self, kind: str, /, **fields: object) -> str:
        """One sealed marker; values are restricted to a safe alphabet so they read back."""
        pairs: list[tuple[str, str]] = []
        for name, value in fields.items():
            text = str(value)
            if name == MAC:
                raise ValueError(f"{MAC} is the seal's own field")
            if not _VALUE.match(text):
                raise ValueError(f"marker value {text!r} for {name} has characters markers refuse")
            pairs.append((name, text))
        body = " ".join(f"{k}={v}" for k, v in [*pairs, (MAC, self._mac(kind, pairs))])
        return f"<!-- magi:{kind} {body} -->"

    def _verified(self, match: re.Match[str]) -> dict[str, str] | None:
        pairs = _PAIR.findall(match[2])
        if not pairs or pairs[-1][0] != MAC:
            return None
        fields, mac = pairs[:-1], pairs[-1][1]
        names = [k for k, _ in fields]
        if MAC in names or len(set(names)) != len(names):
            return None
        if not all(_VALUE.match(v) for _, v in fields):  # a NUL would fake a field boundary
            return None
        if not hmac.compare_digest(mac.encode(), self._mac(match[1], fields).encode()):
            return None
        return dict(fields)

    def read(self, text: str | None) -> list[tuple[str, dict[str, str]]]:
        """Every marker in ``text`` that this seal made: its kind and fields, in order."""
        found: list[tuple[str, dict[str, str]]] = []
        for match in _MARKER.finditer(text or ""):
            fields = self._verified(match)
            if fields is not None:
                found.append((match[1], fields))
        return found

    def find(self, bodies: Iterable[str | None], kind: str, **match: str) -> list[dict[str, str]]:
        """The fields of every sealed ``kind`` marker in ``bodies`` that include ``match``."""
        return [
            fields
            for body in bodies
            for k, fields in self.read(body)
            if k == kind and all(fields.get(a) == b for a, b in match.items())
        ]

    def latest(
        self, bodies: Iterable[str | None], kind: str, **match: str
    ) -> Mapping[str, str] | None:
        """The last matching sealed marker, or None."""
        hits = self.find(bodies, kind, **match)
        return hits[-1] if hits else None

    def issue_of_pull(self, body: str | None) -> int | None:
        """The issue a magi PR came from: its sealed ``magi:pr issue=`` marker, or None.

        Never a closing keyword: "Closes #1" in anyone's PR would make it the issue's PR."""
        issue = (self.latest([body], PR) or {}).get("issue", "")
        return int(issue) if issue.isdigit() else None

    def clean(self, text: str) -> tuple[str, int]:
        """``text`` with every ``<!-- magi:`` that is not a whole marker of this seal's
        escaped (shown, never hidden or read), and how many were."""
        ours = {m.start() for m in _MARKER.finditer(text) if self._verified(m) is not None}
        count = 0

        def escape(m: re.Match[str]) -> str:
            nonlocal count
            if m.start() in ours:
                return m[0]
            count += 1
            return f"&lt;!--{m[1]}magi:"

        return _OPENING.sub(escape, text), count
