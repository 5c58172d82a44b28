"""A run record rendered for people (rich text that reads the same piped) and for scripts (JSON).

Blindness outlives the judging node: an agent seated in a run can run ``magi show`` itself
(it gets MAGI_RUN), so no author or judge identity appears before the tally exists or the
run has finished for good.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from magi.state.model import Candidate, Ranking, Run, RunStatus, Usage

HIDDEN = "hidden until the tally"
_USAGE_KEYS = ("input_tokens", "output_tokens", "cached_tokens", "cost_usd")


def revealed(run: Run) -> bool:
    """Whether authors may be shown: once a tally elected someone, or the run can never be
    judged again. A stalled run's tally has no quorum and its judges will be asked again."""
    elected = run.tally is not None and run.tally.quorum
    return elected or run.status.finished


def first_line(text: str, width: int = 60) -> str:
    """The first non-blank line of ``text``, cut to ``width`` characters."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= width else line[: width - 1] + "…"


def trim(text: str, width: int = 200) -> str:
    """``text`` on one line, cut to ``width`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _add(a: float | None, b: float | None) -> float | None:
    # None means "the CLI never reported it", which must not read as zero.
    return b if a is None else a if b is None else a + b


def _sum_usage(total: dict[str, Any], usage: Usage) -> None:
    for key in _USAGE_KEYS:
        total[key] = _add(total.get(key), getattr(usage, key))


def seat_usage(run: Run) -> dict[str, dict[str, Any]]:
    """Tokens, cost, turns and seconds per seat, summed over its turns, plus ``total``."""
    seats: dict[str, dict[str, Any]] = {}
    total: dict[str, Any] = {"turns": 0, "seconds": 0.0}
    for turn in run.turns:
        row = seats.setdefault(turn.seat, {"turns": 0, "seconds": 0.0})
        for acc in (row, total):
            _sum_usage(acc, turn.usage)
            acc["turns"] += 1
            acc["seconds"] = round(acc["seconds"] + turn.duration_s, 3)
    for row in (*seats.values(), total):
        for key in _USAGE_KEYS:
            row.setdefault(key, None)
    return {**dict(sorted(seats.items())), "total": total}


def node_seconds(run: Run) -> dict[str, float | None]:
    """Wall seconds per node; computed from the timestamps when only those were stored."""
    out: dict[str, float | None] = {}
    for node, t in run.timings.items():
        seconds = t.seconds
        if seconds is None and t.finished_at is not None:
            seconds = (t.finished_at - t.started_at).total_seconds()
        out[node] = None if seconds is None else round(seconds, 3)
    return out


def merge_hint(run: Run) -> str | None:
    """The command that merges the winner, when the run is ready and has one."""
    if run.status is not RunStatus.READY or run.tally is None or run.tally.winner is None:
        return None
    winner = run.tally.winner
    branch = next((c.branch for c in run.candidates if c.label == winner), None)
    return f"git merge {branch or f'magi/{run.id}/{winner}'}"


def _merge_mode(run: Run) -> str:
    return run.config.merge.mode


def _candidate_json(run: Run, c: Candidate, show: bool) -> dict[str, Any]:
    # The summary is the implementer's own prose: long, and no script needs it.
    data = c.model_dump(mode="json", exclude={"summary"})
    data["agent"] = run.agent_of(c.seat) if show else None
    return data


def report_json(run: Run) -> dict[str, Any]:
    """The report as a JSON-ready dict, for ``--json``."""
    show = revealed(run)
    return {
        "id": run.id,
        "status": run.status.value,
        "reason": run.reason,
        "created_at": run.created_at.isoformat(),
        "repo": run.repo,
        "base": run.base,
        "base_sha": run.base_sha,
        "seed": run.seed,
        "winner": run.tally.winner if run.tally else None,
        "authors_revealed": show,
        "task": run.task.cleaned,
        "candidates": [_candidate_json(run, c, show) for c in run.candidates],
        "judges": [
            {"seat": j.seat, "agent": run.agent_of(j.seat) if show else None, "order": j.order}
            for j in run.judges
        ],
        "judgements": [r.model_dump(mode="json") for r in run.judgements],
        "deliberation": [r.model_dump(mode="json") for r in run.deliberation],
        "votes": [v.model_dump(mode="json") for v in run.votes],
        "tally": run.tally.model_dump(mode="json") if run.tally else None,
        "leaks": [leak.model_dump(mode="json") for leak in run.leaks],
        "events": [e.model_dump(mode="json") for e in run.events],
        "timings": node_seconds(run),
        "usage": seat_usage(run),
        "merge": merge_hint(run),
    }


def cells(*values: str | Text) -> list[Text]:
    """Table cells as literal text: agent-written words must never be read as rich markup."""
    return [v if isinstance(v, Text) else Text(v) for v in values]


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


def _flags(c: Candidate) -> str:
    flags = []
    if c.status not in ("ok", "pending"):
        flags.append(f"implementer {c.status}")
    if c.verified_noop:
        flags.append("no-op claimed")
    if c.protected_changed:
        flags.append("protected path changed: " + ", ".join(c.protected_changed))
    if c.violations:
        flags.append("violations: " + "; ".join(c.violations))
    if c.rescued:
        flags.append("uncommitted work rescued")
    if c.disqualified:
        flags.append(f"disqualified: {c.disqualified}")
    return "; ".join(flags)


def _candidates(run: Run, show: bool) -> list[RenderableType]:
    table = _table(
        "label", *(["author"] if show else []), "files", "+/-", "commits", "verify", "flags"
    )
    winner = run.tally.winner if run.tally else None
    for c in run.candidates:
        added = sum(f.added or 0 for f in c.files)
        deleted = sum(f.deleted or 0 for f in c.files)
        verify = "-" if c.verification is None else "pass" if c.verification.passed else "fail"
        label = f"{c.label} <- winner" if c.label == winner else c.label
        author = [run.agent_of(c.seat) or "?"] if show else []
        table.add_row(
            *cells(
                label,
                *author,
                str(len(c.files)),
                f"+{added}/-{deleted}",
                str(c.commits),
                verify,
                _flags(c),
            )
        )
    out: list[RenderableType] = [_heading("candidates"), table]
    if not show:
        out.append(Text(f"authors: {HIDDEN}", style="dim"))
    return out


def _rankings(title: str, rankings: list[Ranking], with_round: bool) -> list[RenderableType]:
    if not rankings:
        return []
    table = _table(*(["round"] if with_round else []), "seat", "status", "ranking", "says")
    for r in rankings:
        lead = [str(r.round)] if with_round else []
        ranking = " > ".join(r.ranking) or "-"
        table.add_row(*cells(*lead, r.seat, r.status, ranking, trim(r.text)))
    return [_heading(title), table]


def _tally(run: Run, show: bool) -> list[RenderableType]:
    t = run.tally
    if t is None:
        return [_heading("tally"), Text("not yet", style="dim")]
    counts = ", ".join(f"{label} {n}" for label, n in sorted(t.counts.items())) or "-"
    counted = ", ".join(f"{cv.seat} {cv.label} ({cv.source})" for cv in t.counted) or "-"
    rows = [
        ("counts", counts),
        ("counted", counted),
        ("quorum", f"{'yes' if t.quorum else 'no'} ({t.answered} of {t.judges} answered)"),
    ]
    if t.uncontested:
        rows.append(("uncontested", "a single viable candidate: no judge sat"))
    if t.tie_break:
        rows.append(("tie-break", t.tie_break))
    if t.reason:
        rows.append(("reason", t.reason))
    winner = t.winner or "none"
    author = run.author(t.winner) if t.winner else None
    if show and author:
        winner += f" ({author})"
    rows.append(("winner", winner))
    return _section("tally", rows)


def _usage_cell(value: float | None, money: bool = False) -> str:
    if value is None:
        return "-"
    return f"${value:.4f}" if money else f"{int(value):,}"


def _costs(run: Run) -> list[RenderableType]:
    out: list[RenderableType] = []
    nodes = node_seconds(run).items()
    out += _section("time per node", [(n, "-" if s is None else f"{s:.1f}s") for n, s in nodes])
    usage = seat_usage(run)
    if run.turns:
        table = _table("seat", "turns", "seconds", "in", "out", "cached", "cost")
        for seat, row in usage.items():
            tokens = (_usage_cell(row[k]) for k in _USAGE_KEYS[:3])
            money = _usage_cell(row["cost_usd"], money=True)
            table.add_row(*cells(seat, str(row["turns"]), f"{row['seconds']:.1f}", *tokens, money))
        out += [_heading("time and tokens per seat"), table]
    return out


def render(run: Run) -> RenderableType:
    """The full text report of one run."""
    show = revealed(run)
    base = f"{run.base}@{run.base_sha[:7]}" if run.base_sha else run.base
    header = [
        ("status", run.status.value),
        ("reason", run.reason or "-"),
        ("base", base),
        ("seed", str(run.seed)),
        ("created", run.created_at.strftime("%Y-%m-%d %H:%M")),
        ("task", first_line(run.task.cleaned, 100)),
    ]
    parts: list[RenderableType] = [Text(f"magi run {run.id}", style="bold"), _grid(header)]
    parts += _candidates(run, show)
    parts += _rankings("first rankings", run.judgements, with_round=False)
    parts += _rankings("deliberation", run.deliberation, with_round=True)
    votes = [(v.seat, f"{v.vote or '(' + v.status + ')'}  {trim(v.rationale)}") for v in run.votes]
    parts += _section("votes", votes)
    parts += _tally(run, show)
    parts += _section(
        "leaks", [(f"{x.label} {x.where}", f"{x.term!r} {x.action}") for x in run.leaks]
    )
    events = [(f"{e.level} {e.node}", e.message) for e in run.events if e.level != "info"]
    parts += _section("warnings and errors", events)
    parts += _costs(run)
    hint = merge_hint(run)
    if hint:
        mode = _merge_mode(run)
        note = " (merge.mode = none: magi stops here)" if mode == "none" else ""
        parts += [_heading("merge"), Text(f"{hint}{note}")]
    return Group(*parts)
