"""GitHub-flavoured markdown that agent text cannot break: escaping, mentions, the size cut.

Everything an agent wrote (rationales, arguments, errors, command output) is untrusted
layout: a stray fence swallows the rest of a comment, a ``</details>`` closes magi's own
section, raw HTML renders, and ``@someone`` pings a person who never asked. So in agent
text ``<`` and ``&`` become entities (no tag can open; GitHub shows the characters),
fences, headings and a leading ``>`` are backslash-escaped, ``@`` gets a zero-width space
after it (``@&#8203;name`` reads as ``@name`` and pings nobody), and multi-line text is
shown as a block quote so whatever is left stays inside it.

A comment must stay under GitHub's body limit: the API refuses longer ones with "Body is
too long (maximum is 65536 characters)" (measured in code points; see
https://github.com/dead-claudia/github-limits/pull/13). ``fit`` counts code points, cuts at
a line boundary, closes the ``<details>`` left open, and says where the rest is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LIMIT = 65_536
BLOCK_MAX = 20_000  # one agent's text may not crowd out every other judge's
# GitHub reads @name as a mention only after a non-word character: main@1234567 is not one.
_MENTION = re.compile(r"(?<![A-Za-z0-9_`])@(?=[A-Za-z0-9_-])")
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")
_LEADING = re.compile(r"^(\s*)([#>])")


class Safe(str):
    """Markdown magi wrote itself: templates print it as it is."""

    __slots__ = ()


def _escape(text: str) -> str:
    # ">" alone opens no tag; at a line start (a quote) _line escapes it.
    text = text.replace("&", "&amp;").replace("<", "&lt;")
    text = text.replace("![", "!\\[")  # no agent-chosen image (a tracking pixel) in a comment
    return _MENTION.sub("@&#8203;", text)


def inline(value: object, width: int = 300) -> Safe:
    """``value`` on one line, escaped for prose and table cells, cut to ``width``."""
    if isinstance(value, Safe):
        return value
    flat = " ".join(str(value).split())
    if len(flat) > width:
        flat = flat[: width - 1] + "…"
    return Safe(_escape(flat).replace("|", "\\|").replace("`", "\\`"))


def _line(line: str) -> str:
    line = _escape(line)
    fence = _FENCE.match(line)
    if fence:
        lead, run = fence.groups()
        line = lead + "".join("\\" + ch for ch in run) + line[fence.end() :]
    return _LEADING.sub(lambda m: m.group(1) + "\\" + m.group(2), line)


def quote(value: object, limit: int = BLOCK_MAX) -> Safe:
    """Multi-line agent text as a block quote it cannot escape from."""
    text = str(value).strip("\n")
    if not text.strip():
        return Safe("> _(nothing)_")
    if len(text) > limit:
        text = text[:limit].rsplit("\n", 1)[0] + "\n… (cut: the whole text is in the run record)"
    return Safe("\n".join(f"> {_line(ln)}".rstrip() for ln in text.splitlines()))


def _step(state: tuple[int, bool], line: str) -> tuple[int, bool]:
    # (open <details> count, inside a fence) after ``line``; agent text never opens either.
    depth, fenced = state
    s = line.strip()
    if s.startswith("```"):
        return depth, not fenced
    if not fenced and s.startswith("<details"):
        return depth + 1, fenced
    if not fenced and s.startswith("</details>"):
        return max(0, depth - 1), fenced
    return state


def _closers(state: tuple[int, bool]) -> str:
    depth, fenced = state
    return ("```\n" if fenced else "") + "\n</details>\n" * depth


def _split_long(lines: list[str], width: int) -> list[str]:
    out: list[str] = []
    for line in lines:
        while len(line) > width:
            out.append(line[:width] + "\n")
            line = line[width:]
        out.append(line)
    return out


def fit(body: str, where: str, limit: int = LIMIT) -> str:
    """``body`` cut at a line boundary to fit ``limit`` characters, saying where the rest is."""
    if len(body) <= limit:
        return body
    lines = _split_long(body.splitlines(keepends=True), limit // 4)

    def notice(left: int) -> str:
        return f"\n\n**Cut here:** {left} more lines did not fit in one comment; see {where}.\n"

    reserve = len(notice(len(lines)))
    kept: list[str] = []
    size = 0
    state = (0, False)
    for line in lines:
        after = _step(state, line)
        if size + len(line) + 1 + len(_closers(after)) + reserve > limit:
            break
        kept.append(line)
        size += len(line)
        state = after
    text = "".join(kept)
    if not text.endswith("\n"):
        text += "\n"
    return text + _closers(state) + notice(len(lines) - len(kept))


@dataclass(frozen=True)
class Section:
    """One titled section of the run summary comment: the review loop's seam (``review_md``).

    ``body`` is markdown the caller built; agent text in it must already have gone through
    ``gfm.inline`` or ``gfm.quote``. ``collapsed`` puts it in a ``<details>``.
    """

    title: str
    body: Safe
    collapsed: bool = False
