"""The matrix rendered: markdown for a PR or issue comment (under 65,536 characters), rich.

Every cell, item and headline holds words a seat wrote (a position, a rationale, a
finding), and a seat's words are data: ``_text`` is the one way any of it enters the
markdown. It is ``core.threads.posting.inert``: one line, capped, HTML as entities, markdown
punctuation (``|`` included) escaped, mentions defused, invisible and bidi characters gone.
So no answer can open a comment that hides the matrix, a ``<details>`` that folds it, a
code fence that swallows it, or a row of its own; the structure (headline, table, sections,
audit line) is magi's alone. The terminal gets the same text without invisible characters.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from magi.core.threads.posting import Policy, code, inert, invisible
from magi.council.matrix import Matrix, Row, build, gist
from magi.state.council import CouncilRun

__all__ = ["COMMENT_LIMIT", "comment_text", "markdown", "posting_policy", "terminal"]

# https://docs.github.com/en/rest/issues/comments: a comment body is at most 65,536 characters.
COMMENT_LIMIT = 65_536
_CUT = "\n\n… (cut to fit a comment; the whole matrix is in the record)\n"

_HEAD = {
    "en": ("Seat", "Agent", "Weight", "Position", "Rationale", "Confidence", "Debate"),
    "ja": ("席", "エージェント", "重み", "立場", "理由", "確信度", "討論"),
}
_SECTIONS = {
    "en": (
        "Minority opinion",
        "Disagreement",
        "Suggested changes",
        "Action items",
        "Notes",
        "Usage",
    ),
    "ja": ("少数意見", "対立点", "変更案", "対応項目", "注記", "使用量"),
}


def _cells(r: Row) -> list[str]:
    position = r.position if r.status == "ok" else r.status
    conf = f"{r.confidence:.2f}" if r.confidence is not None else ""
    who = r.seat + (f" ({r.personality})" if r.personality else "")
    return [who, r.agent or "hidden", str(r.weight), position or "", r.rationale, conf, r.changed]


CELL_MAX = 500  # characters of one cell or list item, before escaping
HEADLINE_MAX = 300


def _text(text: str, limit: int = CELL_MAX) -> str:
    """A seat's words, inert inside magi's markdown (see the module docstring)."""
    return inert(text, limit)


def _plain(text: str) -> str:
    """A seat's words for the terminal: nothing invisible, no control sequence."""
    return invisible(text)[0]


def _sections(m: Matrix, lang: str) -> list[tuple[str, list[str]]]:
    names = _SECTIONS.get(lang, _SECTIONS["en"])
    items = [m.minority, m.breakdown, m.changes, m.actions or ["—"], m.notes, m.usage]
    return [(n, i) for n, i in zip(names, items, strict=True) if i or n == names[0]]


def markdown(rec: CouncilRun, record_path: str = "") -> str:
    """The matrix for a comment; cut on a line boundary if it would pass the comment limit."""
    m = build(rec, record_path)
    head = _HEAD.get(rec.language, _HEAD["en"])
    question = _text(gist(rec.question.cleaned, 300))
    lines = [f"### magi council: {_text(m.headline, HEADLINE_MAX)}", "", f"> {question}", ""]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    lines += ["| " + " | ".join(_text(c) or " " for c in _cells(r)) + " |" for r in m.rows]
    for name, items in _sections(m, rec.language):
        lines += ["", f"**{name}**", ""]
        lines += [f"- {_text(i)}" for i in items] or ["- —"]
    if m.audit:
        # magi's own words around a path: the path as a code span, which the posting gate
        # can still scrub (an escaped path would hide it from the gate's local-path rule).
        where = code(record_path, 300)
        lines += ["", f"<sub>{_text(m.audit).replace(_text(record_path), where, 1)}</sub>"]
    out = "\n".join(lines) + "\n"
    if len(out) > COMMENT_LIMIT:
        room = COMMENT_LIMIT - len(_CUT)
        out = out[: out.rfind("\n", 0, room)] + _CUT
    return out


def comment_text(rec: CouncilRun, audit: str = "") -> str:
    """The comment a council's thread gets, before the posting gate: the matrix, and why
    there is no verdict when there is none."""
    text = markdown(rec, audit)
    if rec.verdict is None:
        text += f"\nThe council did not reach a verdict: {_text(rec.reason or rec.status.value)}.\n"
    return text


def posting_policy(rec: CouncilRun, roots: tuple[tuple[str, str], ...] = ()) -> Policy:
    """How the posting gate treats a council: agents may be named once its verdict exists."""
    return Policy(roster=rec.config.agents, revealed=rec.verdict is not None, roots=roots)


def terminal(rec: CouncilRun, record_path: str = "") -> RenderableType:
    m = build(rec, record_path)
    style = {"passed": "bold green", "rejected": "bold red"}.get(rec.verdict or "", "bold yellow")
    table = Table(show_lines=False, expand=False)
    for h in _HEAD.get(rec.language, _HEAD["en"]):
        table.add_column(h, overflow="fold")
    for r in m.rows:
        table.add_row(*(Text(_plain(c)) for c in _cells(r)))  # a seat's words: never markup
    parts: list[RenderableType] = [
        Text(f"magi council: {_plain(m.headline)}", style=style),
        Text(_plain(gist(rec.question.cleaned, 300)), style="italic"),
        table,
    ]
    for name, items in _sections(m, rec.language):
        parts.append(Text(name, style="bold"))
        parts += [Text(f"  - {_plain(i)}") for i in items]
    if m.audit:
        parts.append(Text(_plain(m.audit), style="dim"))
    return Group(*parts)
