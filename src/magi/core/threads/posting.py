"""The posting gate: the one door every text magi sends to GitHub goes through.

Whatever magi posts (a comment, a PR body, a check run's summary, an issue, the record it
stores in the repository) carries agent text, and agent text is data: it may hold a
secret an agent printed, the runner's local paths, the name of the model that wrote a
candidate, an ``@mention`` that would ping a stranger, a forged ``<!-- magi:... -->``
marker that would make magi edit the wrong comment, or simply too much of it. ``gate``
applies every rule, in this order, and says what it changed:

1. secrets are replaced by ``[REDACTED:<kind>]`` (``core.text.sanitize.redact_secrets``);
2. local absolute paths become ``<local path>`` (known roots first: the repository root is
   ``.``, so relative meaning survives);
3. before the tally is stored, author identities (roster ids, kinds, models and vendor
   names, ``core.compete.blind.leak_terms``) become ``[redacted]``;
4. ``@name`` gets a word joiner after the ``@``, so it reads the same and pings nobody;
5. magi's own hidden markers are escaped, so only magi's text can carry one;
6. the text is cut at a line boundary to fit GitHub's limit, with a pointer to the rest,
   closing a code fence or ``<details>`` the cut left open.

GitHub's limit is 65,536 characters per comment body (``422 Body is too long``); it is
measured here in UTF-16 code units, which is never fewer than GitHub counts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from magi.core.compete.blind import leak_terms, redact_terms
from magi.core.text.sanitize import redact_secrets
from magi.model.config import AgentConfig
from magi.model.run import Redaction

__all__ = [
    "CHECK_SUMMARY_LIMIT",
    "LIMIT",
    "MARKER",
    "Policy",
    "Posted",
    "code",
    "fit",
    "gate",
    "gate_json",
    "inert",
    "invisible",
]

LIMIT = 65_536  # https://docs.github.com/en/rest/issues/comments (body too long: 422)
# A check run's output.summary: "Maximum length: 65535 characters" (checks/create in the
# REST description; githubkit refuses a longer one before sending it).
# https://docs.github.com/en/rest/checks/runs#create-a-check-run
CHECK_SUMMARY_LIMIT = 65_535
MARKER = "<!-- magi:"
WORD_JOINER = "\u2060"
LOCAL_PATH = "<local path>"

# Top-level directories under which a path is somebody's machine, not the repository.
_LOCAL_ROOTS = (
    "home",
    "Users",
    "tmp",
    "var",
    "private",
    "root",
    "opt",
    "srv",
    "mnt",
    "run",
    "runner",
    "work",
    "__w",
    "actions-runner",
    "Volumes",
)
_PATH = re.compile(
    r"(?<![\w.~/:-])/(?:" + "|".join(_LOCAL_ROOTS) + r")(?![\w.-])(?:/[^\s'\"`<>()\[\]{},;|]*)?"
    r"|(?<![\w])[A-Za-z]:\\(?:Users|Windows|actions-runner|a)\\[^\s'\"`<>()\[\]{},;|]*"
)
# GitHub logins: alphanumerics and single hyphens; teams are org/team. An @ after a word
# character is an e-mail address, which does not ping.
_MENTION = re.compile(r"(?<![\w`@/])@(?=[A-Za-z0-9])")
_FORGED = re.compile(r"<!--(\s*)magi:", re.IGNORECASE)
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
# What a reader cannot see or that changes what they see around it: C0 and C1 controls
# (tab and line breaks kept), zero-width and direction marks, bidi embeddings, overrides and
# isolates (CVE-2021-42574), the byte-order mark, and Unicode's tag characters.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b\u200e\u200f\u202a-\u202e"
    "\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
# Markdown's punctuation (CommonMark lets any ASCII punctuation be backslash-escaped);
# < > & become entities instead, so no HTML, comment or marker can open in the raw body.
_MARKUP = re.compile(r"([\\`*_{}\[\]()#+\-!|~=:.])")
QUOTE_MAX = 300


def invisible(text: str) -> tuple[str, int]:
    """``text`` without control, zero-width, direction and tag characters; how many went."""
    return _INVISIBLE.subn("", text)


def code(text: str, limit: int = 100) -> str:
    """Somebody else's short name (a check, a branch) as a code span nothing can leave: one
    line of at most ``limit`` characters, fenced by more backticks than it holds, nothing
    invisible, and no ``<!--`` (a word joiner splits it, so no marker can stand in the raw
    body). Inside a code span no HTML renders and no mention pings."""
    text = " ".join(invisible(text)[0].split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    text = text.replace("<!--", "<!" + WORD_JOINER + "--") or " "
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text[0] == "`" or text[-1] == "`" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def inert(text: str, limit: int = QUOTE_MAX) -> str:
    """Somebody else's words (a command line, a check's name, a branch, a title) as plain
    text inside magi's markdown: one line of at most ``limit`` characters, with no HTML, no
    markup, no code span, no mention, no marker and nothing invisible. It reads as written."""
    text = " ".join(invisible(text)[0].split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return neutralise_mentions(_MARKUP.sub(r"\\\1", text))[0]


@dataclass(frozen=True)
class Policy:
    """What the gate must know about the run a text comes from."""

    roster: Sequence[AgentConfig] = ()
    revealed: bool = False  # the tally is stored: authors may be named
    roots: Sequence[tuple[str, str]] = ()  # (local path, what to show instead), longest first
    limit: int = LIMIT
    pointer: str = "the run record"


@dataclass(frozen=True)
class Posted:
    """The gated text and what the gate changed in it."""

    text: str
    redactions: tuple[Redaction, ...] = ()
    paths: int = 0
    identities: int = 0
    mentions: int = 0
    markers: int = 0
    cut: int = 0  # characters (UTF-16 units) dropped to fit the limit
    notes: tuple[str, ...] = field(default=())


def _units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def scrub_paths(text: str, roots: Sequence[tuple[str, str]]) -> tuple[str, int]:
    """Known roots replaced by their stand-ins, then any other local absolute path."""
    count = 0
    for root, shown in sorted(roots, key=lambda r: -len(r[0])):
        root = root.rstrip("/")
        if len(root) < 2:
            continue
        n = text.count(root)
        if n:
            count += n
            text = text.replace(root, shown)
    text, n = _PATH.subn(LOCAL_PATH, text)
    return text, count + n


def hide_identities(text: str, roster: Sequence[AgentConfig]) -> tuple[str, int]:
    """Every author-identifying term replaced by ``[redacted]``, and how many were."""
    before = text.count("[redacted]")
    out = redact_terms(text, leak_terms(roster))
    return out, out.count("[redacted]") - before


def neutralise_mentions(text: str) -> tuple[str, int]:
    """``@login`` reads the same but notifies nobody (a word joiner follows the ``@``)."""
    return _MENTION.subn("@" + WORD_JOINER, text)


def escape_markers(text: str) -> tuple[str, int]:
    """A ``<!-- magi:`` in gated text is not magi's: it is shown, never hidden or matched."""
    return _FORGED.subn(lambda m: f"&lt;!--{m.group(1)}magi:", text)


@dataclass(frozen=True)
class _Open:
    """What is open after some lines: a code fence, and how many ``<details>``."""

    fence: str | None = None
    details: int = 0

    def after(self, line: str) -> _Open:
        m = _FENCE.match(line)
        if m:
            same = self.fence == m.group(1)
            return _Open(None if same else (self.fence or m.group(1)), self.details)
        if self.fence is not None:
            return self
        opened = len(re.findall(r"<details\b", line, re.IGNORECASE))
        closed = len(re.findall(r"</details>", line, re.IGNORECASE))
        return _Open(None, max(self.details + opened - closed, 0))

    def closers(self) -> str:
        return (f"{self.fence}\n" if self.fence else "") + "</details>\n" * self.details


def _notice(dropped: int, pointer: str) -> str:
    return f"\n> Cut here to fit GitHub's limit: {dropped} more characters are in {pointer}.\n"


def fit(text: str, limit: int = LIMIT, pointer: str = "the run record") -> tuple[str, int]:
    """``text`` within ``limit`` UTF-16 units, cut at a line boundary, with a pointer."""
    total = _units(text)
    if total <= limit:
        return text, 0
    room = limit - _units(_notice(total, pointer)) - 1  # the notice, at its longest
    kept: list[str] = []
    used = 0
    state = _Open()
    for line in text.splitlines(keepends=True):
        nxt = state.after(line)
        if used + _units(line) + _units(nxt.closers()) > room:
            break
        kept.append(line)
        used += _units(line)
        state = nxt
    body = "".join(kept)
    if not kept:  # one line longer than the limit: cut inside it, at a character
        body = text.encode("utf-16-le")[: 2 * max(room - 1, 0)].decode("utf-16-le", "ignore")
    if body and not body.endswith("\n"):
        body += "\n"
    dropped = total - _units(body)
    return body + state.closers() + _notice(dropped, pointer), dropped


def gate(text: str, policy: Policy, where: str = "github") -> Posted:
    """``text`` as it may be posted on GitHub, with an account of every change."""
    text, redactions = redact_secrets(text, where)
    text, hidden = invisible(text)
    text, paths = scrub_paths(text, policy.roots)
    identities = 0
    if not policy.revealed:
        text, identities = hide_identities(text, policy.roster)
    text, mentions = neutralise_mentions(text)
    text, markers = escape_markers(text)
    text, cut = fit(text, policy.limit, policy.pointer)
    notes = [f"{r.count} {r.kind} redacted" for r in redactions]
    for n, what in (
        (hidden, "invisible characters removed"),
        (paths, "local paths scrubbed"),
        (identities, "author names hidden until the tally"),
        (mentions, "mentions neutralised"),
        (markers, "forged magi markers escaped"),
        (cut, "characters cut to fit"),
    ):
        if n:
            notes.append(f"{n} {what}")
    return Posted(
        text=text,
        redactions=tuple(redactions),
        paths=paths,
        identities=identities,
        mentions=mentions,
        markers=markers,
        cut=cut,
        notes=tuple(notes),
    )


def aliases(roster: Sequence[AgentConfig]) -> dict[str, str]:
    """Stand-in ids for a record stored before the tally: ``agent-1``... in roster order.

    A stored record must still validate (an agent id has a shape, and ids are unique), so
    ids become neutral ids rather than ``[redacted]``; kinds and models are redacted."""
    return {a.id: f"agent-{i}" for i, a in enumerate(roster, start=1)}


def _unnamed(text: str, names: dict[str, str]) -> str:
    """``text`` with every roster id in it ``[redacted]``, however short (a record's texts
    are magi's own sentences, where a short id is a name, not a word of code)."""
    if text in names:
        return names[text]
    for real in sorted(names, key=len, reverse=True):
        pattern = rf"(?<![^\W_]){re.escape(real)}(?![^\W_])"
        text = re.sub(pattern, "[redacted]", text, flags=re.I)
    return text


def hide_roster(text: str, roster: Sequence[AgentConfig]) -> str:
    """A sentence of magi's with every roster id in it (however short), kind, model and
    vendor name ``[redacted]``: what a record's events may say where authors are hidden."""
    return hide_identities(_unnamed(text, {a.id: "[redacted]" for a in roster}), roster)[0]


def gate_json(value: Any, policy: Policy, where: str = "record") -> Any:
    """Every string in a JSON value gated (no size cut): a record to store. Before the
    tally, keys that name an author (a model's name keying its tokens) are hidden too.

    Only a string that is a roster id becomes its alias (an id field must still be one);
    an id inside a text is ``[redacted]`` like any name: an alias follows the roster's
    order, which the committed config shows, so a sentence saying which alias did what
    would say which agent did (``magi.report.before_tally`` for the fields)."""
    unlimited = Policy(
        roster=policy.roster, revealed=policy.revealed, roots=policy.roots, limit=1 << 62
    )
    names = {} if policy.revealed else aliases(policy.roster)

    def key(k: Any) -> Any:
        # Keys can name authors too (usage by model name): hidden like values until the
        # tally; two that become one keep the last (the detail returns once revealed).
        if policy.revealed or not isinstance(k, str):
            return k
        return hide_identities(_unnamed(k, names), policy.roster)[0]

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return gate(_unnamed(v, names) if names else v, unlimited, where).text
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            return {key(k): walk(x) for k, x in v.items()}
        return v

    return walk(value)
