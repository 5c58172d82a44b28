"""The report as the GitHub comments a PR or issue carries: the tally, the judges' transcripts,
and the run summary that the review loop's findings are added to.

Rendered from the same view as the terminal report, with jinja2 templates shipped in
``magi/templates/*.md.j2``. Every value a template prints is escaped (``gfm.inline``)
unless magi wrote it as markdown itself (``gfm.Safe``), so forgetting a filter cannot let
agent text through raw. Each comment is cut to fit GitHub's limit (``gfm.fit``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from jinja2 import Environment, PackageLoader, StrictUndefined

from magi.model.run import Run
from magi.report.costs import ESTIMATE_NOTE, shows_estimates, shows_refusals
from magi.report.failures import SeatView
from magi.report.gfm import LIMIT, Safe, Section, fit, inline, quote
from magi.report.review_md import review_sections
from magi.report.text import flags
from magi.report.view import RankingView, RunView, VoteView, build

SEPARATOR = "\n\n-------- 8< -------- next comment -------- 8< --------\n\n"


@dataclass(frozen=True)
class Comment:
    name: str  # "tally", "transcripts", "review": the marker the poster finds it by
    body: str


def _finalize(value: object) -> str:
    return value if isinstance(value, Safe) else inline(value)


def _ranking(value: Sequence[str]) -> Safe:
    return Safe(" > ".join(inline(x) for x in value) or "-")


_ENV = Environment(
    loader=PackageLoader("magi", "templates"),
    # Markdown, not HTML: HTML autoescaping would miss fences and mentions, so _finalize
    # escapes every printed value for markdown instead.
    autoescape=False,  # noqa: S701
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    finalize=_finalize,
)
_ENV.filters["quote"] = quote
_ENV.filters["ranking"] = _ranking


def where(view: RunView) -> str:
    """Where the whole record is, for a cut comment: the record itself, not a local path."""
    return f"the run record `runs/{view.id}/run.json` (`magi show {view.id}`)"


@dataclass(frozen=True)
class _Transcript:
    seat: str
    summary: str
    first: RankingView | None
    turns: tuple[RankingView, ...]
    vote: VoteView | None
    failure: str


def _transcripts(v: RunView) -> list[_Transcript]:
    seats = [j.seat for j in v.judges]
    seats += [r.seat for r in (*v.judgements, *v.deliberation)] + [x.seat for x in v.votes]
    by_seat: dict[str, SeatView] = {s.name: s for s in v.seats}
    out = []
    for seat in dict.fromkeys(seats):
        first = next((r for r in v.judgements if r.seat == seat), None)
        vote = next((x for x in v.votes if x.seat == seat), None)
        agent = next((j.agent for j in v.judges if j.seat == seat and j.agent), None)
        held = by_seat.get(seat)
        said = []
        if first is not None and first.ranking:
            said.append("ranked " + " > ".join(first.ranking))
        if vote is not None:
            said.append(f"voted {vote.vote}" if vote.vote else f"vote {vote.status}")
        who = f"{seat} ({agent})" if agent else seat
        failure = (
            held.chain() if held is not None and (held.failed or len(held.holders) > 1) else ""
        )
        out.append(
            _Transcript(
                seat=seat,
                summary=f"{who}: {', '.join(said) or 'no answer'}",
                first=first,
                turns=tuple(r for r in v.deliberation if r.seat == seat),
                vote=vote,
                failure=failure,
            )
        )
    return out


def _candidates(v: RunView) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for c in v.candidates:
        added = sum(f.added or 0 for f in c.files)
        deleted = sum(f.deleted or 0 for f in c.files)
        verify = "-" if c.verification is None else "pass" if c.verification.passed else "fail"
        rows.append(
            {
                "label": c.label,
                "winner": c.label == v.winner,
                "files": len(c.files),
                "diff": f"+{added}/-{deleted}",
                "commits": c.commits,
                "verify": verify,
                "flags": flags(c) or "-",
            }
        )
    return rows


def _tildes(text: str) -> Safe:
    """``text`` for a table cell, its ``~`` (estimates) never read as strikethrough."""
    return Safe(inline(text).replace("~", "\\~"))


def _count(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def tally_comment(v: RunView) -> Comment:
    t = v.tally
    counts = counted = "-"
    if t is not None:
        counts = ", ".join(f"{k} {n}" for k, n in sorted(t.counts.items())) or "-"
        counted = ", ".join(f"{c.seat} {c.label} ({c.source})" for c in t.counted) or "-"
    body = _ENV.get_template("tally.md.j2").render(
        v=v,
        t=t,
        base=f"{v.base}@{v.base_sha[:7]}" if v.base_sha else v.base,
        candidates=_candidates(v),
        counts=counts,
        counted=counted,
    )
    return Comment("tally", fit(body, where(v), LIMIT))


def transcripts_comment(v: RunView) -> Comment:
    body = _ENV.get_template("transcripts.md.j2").render(v=v, judges=_transcripts(v))
    return Comment("transcripts", fit(body, where(v), LIMIT))


def render_sections(sections: Sequence[Section]) -> Safe:
    """The review loop's sections (findings, e2e, gate), or a placeholder until it runs."""
    if not sections:
        return Safe("### Review\n\n_The review loop has not run yet: its findings will be here._\n")
    parts = []
    for s in sections:
        title = inline(s.title)
        if s.collapsed:
            body = s.body.rstrip("\n")
            parts.append(f"<details>\n<summary>{title}</summary>\n\n{body}\n\n</details>\n")
        else:
            parts.append(f"### {title}\n\n{s.body.rstrip()}\n")
    return Safe("\n".join(parts))


def review_comment(v: RunView, sections: Sequence[Section] = ()) -> Comment:
    usage = [
        {
            "seat": u.seat,
            "turns": u.turns,
            "seconds": f"{u.seconds:.1f}",
            "input": _count(u.input_tokens),
            "output": _count(u.output_tokens),
            "cached": _count(u.cached_tokens),
            "cost": _tildes(u.cost),
            "refused": u.refused,
        }
        for u in v.usage
        if len(v.usage) > 1
    ]
    notes = [ESTIMATE_NOTE] if usage and shows_estimates(v.usage) else []
    if usage and v.usage_caveat:
        notes.append(v.usage_caveat)
    note = _tildes("; ".join(notes)) if notes else None
    body = _ENV.get_template("review.md.j2").render(
        v=v,
        task=inline(v.task.strip().splitlines()[0] if v.task.strip() else "", 200),
        failed=v.failed_seats,
        usage=usage,
        usage_note=note,
        refusals=shows_refusals(v.usage),
        sections=render_sections(sections),
    )
    return Comment("review", fit(body, where(v), LIMIT))


def comments(v: RunView, sections: Sequence[Section] = ()) -> tuple[Comment, ...]:
    """The three comments a PR carries, in the order they are posted."""
    return (tally_comment(v), transcripts_comment(v), review_comment(v, sections))


def render_markdown(run: Run) -> str:
    """Every comment of ``run``, one after another (``magi show --markdown``): what the PR
    carries, its review sections included (file:line as code spans: no PR head to link)."""
    bodies = comments(build(run), review_sections(run))
    return SEPARATOR.join(c.body.rstrip("\n") for c in bodies) + "\n"
