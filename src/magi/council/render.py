"""The matrix rendered: markdown for a PR or issue comment (under 65,536 characters), rich."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from magi.council.matrix import Matrix, Row, build, gist
from magi.state.council import CouncilRun

__all__ = ["COMMENT_LIMIT", "markdown", "terminal"]

# https://docs.github.com/en/rest/issues/comments: a comment body is at most 65,536 characters.
COMMENT_LIMIT = 65_536
_CUT = "\n\n… (cut to fit a comment; the whole matrix is in the record)\n"

_HEAD = {
    "en": ("Seat", "Agent", "Weight", "Position", "Rationale", "Confidence", "Debate"),
    "ja": ("席", "エージェント", "重み", "立場", "理由", "確信度", "討論"),
}
_SECTIONS = {
    "en": ("Minority opinion", "Disagreement", "Suggested changes", "Action items", "Notes"),
    "ja": ("少数意見", "対立点", "変更案", "対応項目", "注記"),
}


def _cells(r: Row) -> list[str]:
    position = r.position if r.status == "ok" else r.status
    conf = f"{r.confidence:.2f}" if r.confidence is not None else ""
    who = r.seat + (f" ({r.personality})" if r.personality else "")
    return [who, r.agent or "hidden", str(r.weight), position or "", r.rationale, conf, r.changed]


def _md_cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())[:500]


def _sections(m: Matrix, lang: str) -> list[tuple[str, list[str]]]:
    names = _SECTIONS.get(lang, _SECTIONS["en"])
    items = [m.minority, m.breakdown, m.changes, m.actions or ["—"], m.notes]
    return [(n, i) for n, i in zip(names, items, strict=True) if i or n == names[0]]


def markdown(rec: CouncilRun, record_path: str = "") -> str:
    """The matrix for a comment; cut on a line boundary if it would pass the comment limit."""
    m = build(rec, record_path)
    head = _HEAD.get(rec.language, _HEAD["en"])
    question = _md_cell(gist(rec.question.cleaned, 300))
    lines = [f"### magi council: {m.headline}", "", f"> {question}", ""]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    lines += ["| " + " | ".join(_md_cell(c) for c in _cells(r)) + " |" for r in m.rows]
    for name, items in _sections(m, rec.language):
        lines += ["", f"**{name}**", ""]
        lines += [f"- {_md_cell(i)}" for i in items] or ["- —"]
    if m.audit:
        lines += ["", f"<sub>{m.audit}</sub>"]
    out = "\n".join(lines) + "\n"
    if len(out) > COMMENT_LIMIT:
        room = COMMENT_LIMIT - len(_CUT)
        out = out[: out.rfind("\n", 0, room)] + _CUT
    return out


def terminal(rec: CouncilRun, record_path: str = "") -> RenderableType:
    m = build(rec, record_path)
    style = {"passed": "bold green", "rejected": "bold red"}.get(rec.verdict or "", "bold yellow")
    table = Table(show_lines=False, expand=False)
    for h in _HEAD.get(rec.language, _HEAD["en"]):
        table.add_column(h, overflow="fold")
    for r in m.rows:
        table.add_row(*_cells(r))
    parts: list[RenderableType] = [
        Text(f"magi council: {m.headline}", style=style),
        Text(gist(rec.question.cleaned, 300), style="italic"),
        table,
    ]
    for name, items in _sections(m, rec.language):
        parts.append(Text(name, style="bold"))
        parts += [Text(f"  - {i}") for i in items]
    if m.audit:
        parts.append(Text(m.audit, style="dim"))
    return Group(*parts)
