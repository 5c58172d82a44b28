"""The report for people at a terminal: rich text that reads the same piped (no boxes)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from magi.core.review.report import follow_up_lines, review_rows
from magi.model.run import Run
from magi.report.costs import ESTIMATE_NOTE, shows_estimates, shows_refusals
from magi.report.view import HIDDEN, CandidateView, RankingView, RunView, build


def first_line(text: str, width: int = 60) -> str:
    """The first non-blank line of ``text``, cut to ``width`` characters."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= width else line[: width - 1] + "…"


def trim(text: str, width: int = 200) -> str:
    """``text`` on one line, cut to ``width`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def cells(*values: str | Text) -> list[Text]:
    """Table cells as literal text: agent-written words must never be read as rich markup."""
    return [v if isinstance(v, Text) else Text(v) for v in values]


def flags(c: CandidateView) -> str:
    """What a person must know about a candidate besides its diff, on one line."""
    out = []
    if c.status not in ("ok", "pending"):
        out.append(f"implementer {c.status}")
    if c.verified_noop:
        out.append("no-op claimed")
    if c.protected_changed:
        out.append("protected path changed: " + ", ".join(c.protected_changed))
    if c.violations:
        out.append("violations: " + "; ".join(c.violations))
    out += c.tests_edited
    if c.rescued:
        out.append("uncommitted work rescued")
    if c.disqualified:
        out.append(f"disqualified: {c.disqualified}")
    return "; ".join(out)


def _heading(title: str) -> Text:
    return Text(f"\n{title}", style="bold")


def _grid(rows: list[tuple[str, str]]) -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="dim", no_wrap=True)
    grid.add_column()
    for key, value in rows:
        grid.add_row(*cells(key, value))
    return grid


def _section(title: str, rows: list[tuple[str, str]]) -> list[RenderableType]:
    return [_heading(title), _grid(rows)] if rows else []


def _table(*columns: str) -> Table:
    # No box: the report must read the same in a pager, a CI log or `magi | head`.
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for col in columns:
        table.add_column(col, overflow="fold")
    return table


def _who(agent: str | None, cli: str | None) -> str:
    """An agent as the report names it after the tally: its id, and the CLI it ran."""
    return f"{agent or '-'} ({cli})" if cli else agent or "-"


def _candidates(v: RunView) -> list[RenderableType]:
    show = v.revealed
    table = _table(
        "label", *(["author"] if show else []), "files", "+/-", "commits", "verify", "flags"
    )
    for c in v.candidates:
        added = sum(f.added or 0 for f in c.files)
        deleted = sum(f.deleted or 0 for f in c.files)
        verify = "-" if c.verification is None else "pass" if c.verification.passed else "fail"
        label = f"{c.label} <- winner" if c.label == v.winner else c.label
        author = [_who(c.agent, c.cli)] if show else []
        table.add_row(
            *cells(
                label,
                *author,
                str(len(c.files)),
                f"+{added}/-{deleted}",
                str(c.commits),
                verify,
                flags(c),
            )
        )
    out: list[RenderableType] = [_heading("candidates"), table]
    if not show:
        out.append(Text(f"authors: {HIDDEN}", style="dim"))
    return out


def _rankings(
    title: str, rankings: tuple[RankingView, ...], with_round: bool
) -> list[RenderableType]:
    if not rankings:
        return []
    table = _table(*(["round"] if with_round else []), "seat", "status", "ranking", "says")
    for r in rankings:
        lead = [str(r.round)] if with_round else []
        ranking = " > ".join(r.ranking) or "-"
        table.add_row(*cells(*lead, r.seat, r.status, ranking, trim(r.text)))
    return [_heading(title), table]


def _tally(v: RunView) -> list[RenderableType]:
    t = v.tally
    if t is None:
        return [_heading("tally"), Text("not yet", style="dim")]
    counts = ", ".join(f"{label} {n}" for label, n in sorted(t.counts.items())) or "-"
    counted = ", ".join(f"{cv.seat} {cv.label} ({cv.source})" for cv in t.counted) or "-"
    quorum = f"{'yes' if t.quorum else 'no'} ({t.answered} of {t.judges} answered)"
    if t.uncontested:
        # "yes (0 of 0 answered)" reads as a clean election; nobody was asked.
        quorum = "not needed: nobody was asked"
    rows = [("counts", counts), ("counted", counted), ("quorum", quorum)]
    if t.uncontested:
        rows.append(("uncontested", "a single viable candidate: no judge sat"))
    if t.tie_break:
        rows.append(("tie-break", t.tie_break))
    if t.reason:
        rows.append(("reason", t.reason))
    winner = t.winner or "none"
    author = v.author(t.winner)
    if author:
        winner += f" ({author})"
    rows.append(("winner", winner))
    return _section("tally", rows)


def _usage_cell(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _costs(v: RunView) -> list[RenderableType]:
    rows = [(n, "-" if s is None else f"{s:.1f}s") for n, s in v.timings]
    if v.stopped is not None:
        rows.append((v.stopped.node, f"{v.stopped.seconds:.1f}s ({v.stopped.note(v.status)})"))
    out = _section("time per node", rows)
    if len(v.usage) > 1:
        refusals = shows_refusals(v.usage)
        more = ("refused",) if refusals else ()
        table = _table("seat", "turns", "seconds", "in", "out", "cached", "cost", *more)
        for u in v.usage:
            tokens = (_usage_cell(x) for x in (u.input_tokens, u.output_tokens, u.cached_tokens))
            extra = (str(u.refused),) if refusals else ()
            row = (u.seat, str(u.turns), f"{u.seconds:.1f}", *tokens, u.cost, *extra)
            table.add_row(*cells(*row))
        out += [_heading("time and tokens per seat"), table]
        if shows_estimates(v.usage):
            out.append(Text(ESTIMATE_NOTE, style="dim"))
        if v.usage_caveat:
            out.append(Text(v.usage_caveat, style="dim"))
    return out


def _failures(v: RunView) -> list[RenderableType]:
    rows = [(s.name, f"{s.status}: {s.chain()}") for s in v.failed_seats]
    return _section("failed seats (who held each seat, and how each lost it)", rows)


def render_view(v: RunView, road: Sequence[RenderableType] = ()) -> RenderableType:
    """The full text report of a view; ``road`` (the winner's review, gate and merge) is
    placed after the tally, in pipeline order, before the time and the costs."""
    base = f"{v.base}@{v.base_sha[:7]}" if v.base_sha else v.base
    header = [
        ("status", v.status),
        ("reason", v.reason or "-"),
        ("base", base),
        ("seed", str(v.seed)),
        ("jail", v.jail),
        ("created", v.created_at.strftime("%Y-%m-%d %H:%M")),
        ("task", first_line(v.task, 100)),
    ]
    parts: list[RenderableType] = [Text(f"magi run {v.id}", style="bold"), _grid(header)]
    if v.warnings:
        parts += [_heading("read this first")]
        parts += [Text(f"! {w}", style="yellow") for w in v.warnings]
    parts += _candidates(v)
    parts += _rankings("first rankings", v.judgements, with_round=False)
    parts += _rankings("deliberation", v.deliberation, with_round=True)
    votes = [(x.seat, f"{x.vote or '(' + x.status + ')'}  {trim(x.rationale)}") for x in v.votes]
    parts += _section("votes", votes)
    parts += _tally(v)
    parts += _section("judges", [(j.seat, _who(j.agent, j.cli)) for j in v.judges if v.revealed])
    parts += _failures(v)
    parts += _section(
        "leaks", [(f"{x.label} {x.where}", f"{x.term!r} {x.action}") for x in v.leaks]
    )
    events = [(f"{e.level} {e.node}", e.message) for e in v.events if e.level != "info"]
    parts += _section("warnings and errors", events)
    parts += road
    if v.merge and not road:  # a run from before the merge node recorded its merge
        note = " (merge.mode = none: magi stops here)" if v.merge_mode == "none" else ""
        parts += [_heading("merge"), Text(f"{v.merge}{note}")]
    parts += _costs(v)
    return Group(*parts)


def render(run: Run) -> RenderableType:
    """The full text report of one run; the winner's road, then follow-ups, close it."""
    road = _section("review, gate and merge", review_rows(run))
    parts: list[RenderableType] = [render_view(build(run), road)]
    if follow := follow_up_lines(run):
        parts += [_heading("follow-ups (minor findings nobody adopted)")]
        parts += [Text(line) for line in follow]
    if run.questions:
        parts += [_heading("questions (magi ask)")]
        parts += [Text(line) for line in question_lines(run)]
    return Group(*parts)


def question_lines(run: Run) -> list[str]:
    """One line per question turn: who asked, what, and how it was answered (or not yet)."""
    from magi.core.person.asking import where

    lines = []
    for q in run.questions:
        for i, t in enumerate(q.turns, start=1):
            thread = f" (reply {i})" if i > 1 else ""
            if t.how is None:
                asking = q.status in ("open", "waiting")
                got = f"waiting on you: magi answer {q.id} ..." if asking else q.status
            else:
                got = f"{t.how}: {t.answer}"
            choices = f" [{' / '.join(t.choices)}]" if t.choices else ""
            lines.append(
                f"{q.id}{thread}  {where(q.node, q.label, q.seat)}: {t.summary}{choices} -> {got}"
            )
    return lines
