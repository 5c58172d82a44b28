"""The result matrix: one council record, read into rows, then rendered as JSON, markdown, rich.

What it always holds (seed 001): a verdict headline first; one row per seat in config
order, agents revealed only once a verdict exists, a ``no answer (...)`` row for every
seat that could not answer and a debate column that says ``not held`` when no debate ran;
the minority opinion, always; the disagreement breakdown on no consensus; every suggested
change with its outcome; action items; the audit line naming where the record is.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from magi.core.council.phrases import localize
from magi.core.figures.pricing import price_table, spend, usd
from magi.model.run import Turn, Usage
from magi.state.council import CouncilRun

__all__ = ["Matrix", "Row", "SeatUsage", "build", "to_json", "usage"]

LABELS = {
    "en": {
        "passed": "passed",
        "rejected": "rejected",
        "no_consensus": "no consensus — returned to you",
        "inconclusive": "inconclusive",
        "conditional": "approved with conditions — not passing until they are met",
        "no_council": "no council",
        "not_held": "not held",
        "no_answer": "no answer",
        "not_seated": "not seated",
        "unanimous": "none: every answering seat holds the passed position",
        "lost": "lost the vote; recorded",
        "split": "none: no position passed; every position is in the disagreement breakdown",
        "clerk_failed": "the clerk gave no usable grouping ({phase}, round {n}: {status}); "
        "every item was counted alone",
        "judged": "{seat} {verdict}: {reason}",
        "open": "open: no further round to put it to",
        "council": "the council",
    },
    "ja": {
        "passed": "可決",
        "rejected": "否決",
        "no_consensus": "合意なし — 判断をお返しします",
        "inconclusive": "結論なし",
        "conditional": "条件付き承認 — 条件が満たされるまで通りません",
        "no_council": "合議不成立",
        "not_held": "討論なし",
        "no_answer": "回答なし",
        "not_seated": "着席せず",
        "unanimous": "なし: 回答した全席が可決案を支持",
        "lost": "採決で敗れましたが記録します",
        "split": "なし: 可決された立場はありません。すべての立場は対立点に記載しています",
        "clerk_failed": "書記の分類が使えませんでした（{phase}、第{n}ラウンド: {status}）。"
        "各項目を個別に数えました",
        "judged": "{seat} {verdict}: {reason}",
        "open": "未決: 諮る次のラウンドがありません",
        "council": "合議全体",
    },
}


def _l(rec: CouncilRun, key: str) -> str:
    return LABELS.get(rec.language, LABELS["en"])[key]


def gist(text: str, limit: int = 140) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(frozen=True)
class Row:
    seat: str
    agent: str | None  # None until the verdict exists
    weight: int
    personality: str | None
    status: str
    position: str | None
    rationale: str
    confidence: float | None
    changed: str


@dataclass(frozen=True)
class Matrix:
    headline: str
    rows: list[Row]
    minority: list[str]
    breakdown: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    audit: str = ""
    usage: list[str] = field(default_factory=list)  # tokens and dollars per seat, then total


def _phases(rec: CouncilRun) -> list[tuple[str, int]]:
    first = {"decision": "ask", "research": "research", "review": "review"}[rec.mode]
    return [(first, 0)] + [("debate", n) for n in range(1, rec.debate_rounds + 1)]


def _row(rec: CouncilRun, seat: Any) -> Row:
    agent = seat.agent if rec.verdict is not None else None
    if not seat.seated:
        status = f"{_l(rec, 'not_seated')} ({seat.absent})"
        return Row(seat.seat, agent, seat.weight, seat.personality, status, None, "", None, "")
    position: str | None = None
    rationale, status = "", "pending"
    confidence: float | None = None
    changes: list[str] = []
    for phase, n in _phases(rec):
        a = rec.answer(phase, n, seat.seat)
        if a is None:
            continue
        if a.status != "ok" or a.data is None:
            if phase == "debate":
                changes.append(f"{_l(rec, 'no_answer')} ({a.status})")
            else:
                status = f"{_l(rec, 'no_answer')} ({a.status})"
            continue
        d = a.data
        if phase == "debate":
            before = position
            changes.append(
                d["stance"]
                if d["position"] == before
                else f"{d['stance']}: {before} → {d['position']}"
            )
        status = "ok"
        if rec.mode == "review":
            position = d["vote"]
        elif rec.mode == "research":
            position = f"{len(d['findings'])} finding(s)"
        else:
            position = d["position"]
        titles = "; ".join(f.get("title") or f.get("claim", "") for f in d.get("findings", []))
        rationale = gist(d.get("rationale") or d.get("reason") or titles)
        if d.get("confidence") is not None:
            confidence = d["confidence"]
    changed = "; ".join(changes) if rec.debate_rounds else _l(rec, "not_held")
    return Row(
        seat.seat,
        agent,
        seat.weight,
        seat.personality,
        status,
        position,
        rationale,
        confidence,
        changed,
    )


def _headline(rec: CouncilRun) -> str:
    verdict = rec.verdict or "pending"
    word = _l(rec, verdict) if verdict in LABELS["en"] else verdict
    if rec.mode == "decision" and rec.verdict == "passed" and rec.tallies:
        t = rec.tallies[-1]
        g = t.groups[t.passed or 0]
        answered = sum(len(x.seats) for x in t.groups)
        seats = f"{len(g.seats)} of {answered} seats"
        return f"{word} — {rec.position} ({seats}, weight {g.weight} of {t.total})"
    return f"{word} — {localize(rec.language, rec.reason)}" if rec.reason else word


def _minority(rec: CouncilRun, rows: list[Row]) -> list[str]:
    if rec.mode == "review" and rec.review is not None:
        return [
            f"{s}: {next((r.position for r in rows if r.seat == s), '')}; {_l(rec, 'lost')}"
            for s in rec.review.dissent
        ]
    if rec.mode != "decision" or not rec.tallies:
        return []
    t = rec.tallies[-1]
    if t.passed is None:
        # Nobody lost a vote that nothing won: the positions are the breakdown.
        return [_l(rec, "split")]
    top = t.groups[t.passed]
    out = []
    for r in rows:
        if r.position is None or top is None or r.seat in top.seats:
            continue
        out.append(f"{r.seat}: {r.position} — {r.rationale.rstrip('.')}; {_l(rec, 'lost')}")
    return out or [_l(rec, "unanimous")]


def _review_conditions(rec: CouncilRun) -> list[str]:
    """Every CONDITIONAL vote's conditions, as action items: what must change to pass."""
    out = []
    for a in rec.answers:
        if a.phase == "review" and a.data is not None and a.data.get("vote") == "CONDITIONAL":
            out += [f"[condition] {gist(c)} ({a.seat})" for c in a.data.get("conditions", [])]
    return out


@dataclass(frozen=True)
class SeatUsage:
    """What one seat (or the clerk, or the whole council: ``total``) spent."""

    seat: str
    turns: int
    input_tokens: int | None  # None: never reported, which is not zero
    output_tokens: int | None
    cost_usd: float | None  # reported plus estimated; None: no turn had a dollar figure
    estimated_usd: float  # the part of cost_usd estimated from tokens (magi.core.figures.pricing)


def usage(rec: CouncilRun) -> list[SeatUsage]:
    """Per seat in panel order, the clerk, then ``total`` (seed 002: a council's cost)."""
    prices = price_table(rec.config.budget.prices)
    order = [s.seat for s in rec.panel_seats] + ["clerk"]
    per: dict[str, list[Turn]] = {}
    for t in rec.turns:
        per.setdefault(t.seat, []).append(t)
    seats = [s for s in order if s in per] + sorted(s for s in per if s not in order)

    def one(seat: str, turns: list[Turn]) -> SeatUsage:
        tokens = sum((t.usage for t in turns), Usage())
        spent = spend(turns, prices)
        return SeatUsage(
            seat,
            len(turns),
            tokens.input_tokens,
            tokens.output_tokens,
            round(spent.usd, 6) if spent.metered else None,
            round(spent.estimated_usd, 6),
        )

    return [one(s, per[s]) for s in seats] + [one("total", list(rec.turns))]


def _usage_line(u: SeatUsage, total_word: str) -> str:
    who = total_word if u.seat == "total" else u.seat
    tokens = (
        f"{u.input_tokens or 0:,} in / {u.output_tokens or 0:,} out tokens"
        if u.input_tokens is not None or u.output_tokens is not None
        else "tokens not reported"
    )
    cost = "cost not reported" if u.cost_usd is None else usd(u.cost_usd, u.estimated_usd, 4)
    return f"{who}: {u.turns} turn(s), {tokens}, {cost}"


def build(rec: CouncilRun, record_path: str = "") -> Matrix:
    rows = [_row(rec, s) for s in rec.panel_seats]
    breakdown = []
    if rec.verdict == "no_consensus" and rec.tallies:
        for g in rec.tallies[-1].groups:
            breakdown.append(f"{g.text}: {', '.join(g.seats)} (weight {g.weight})")
    changes = []
    for ch in rec.changes:
        outcome = _l(rec, "open") if ch.outcome == "open" else ch.outcome
        votes = ", ".join(f"{s} {'adopt' if v else 'reject'}" for s, v in ch.votes.items())
        changes.append(
            f"{ch.id} ({ch.seat}): {gist(ch.text)} — {outcome}" + (f" [{votes}]" if votes else "")
        )
    actions = [f"{ch.id}: {gist(ch.text)}" for ch in rec.changes if ch.outcome == "adopted"]
    actions += _review_conditions(rec)
    for a in rec.answers:
        if a.phase == "review" and a.data is not None:
            for f in a.data.get("findings", []):
                if f["severity"] in ("critical", "major"):
                    actions.append(f"[{f['severity']}] {f['title']} ({a.seat})")
    # magi's sentences are put in the question's language one by one, before any words of
    # a seat or the clerk join them: those are never translated.
    lang = rec.language
    notes = [localize(lang, n) for n in rec.notes]
    if rec.review is not None:
        notes += [localize(lang, f"veto ignored: {v}") for v in rec.review.ignored_vetoes]
    for a in rec.answers:
        if a.seat == "clerk" and a.status != "ok":
            phase = a.phase.removeprefix("clerk-")
            notes.append(_l(rec, "clerk_failed").format(phase=phase, n=a.round, status=a.status))
    for item in rec.research:
        claim = gist(item.claims[0]["claim"]) if item.claims else ""
        head = localize(lang, f"{item.id} {item.outcome} ({len(item.supporters)} supporter(s))")
        extra = f" — {localize(lang, item.note)}" if item.note else ""
        extra += f" (conflict: {item.conflict})" if item.conflict else ""
        notes.append(f"{head}: {claim}{extra}")
        # The conditions and both sides of a split, as the judges gave them.
        for seat, (verdict, *why) in item.verdicts.items():
            if verdict != "agree" or item.outcome == "conditional":
                reason = gist(why[0] if why else "", 300)
                judged = _l(rec, "judged").format(seat=seat, verdict=verdict, reason=reason)
                notes.append(f"{item.id} {judged}")
    audit = (
        f"record: {record_path} (every prompt and raw answer is under its artifacts/)"
        if record_path
        else ""
    )
    spent = [_usage_line(u, _l(rec, "council")) for u in usage(rec)] if rec.turns else []
    return Matrix(
        _headline(rec),
        rows,
        _minority(rec, rows),
        breakdown,
        changes,
        actions,
        notes,
        audit,
        spent,
    )


def to_json(rec: CouncilRun, record_path: str = "") -> dict[str, Any]:
    m = build(rec, record_path)
    return {
        "id": rec.id,
        "kind": rec.kind,
        "mode": rec.mode,
        "status": rec.status.value,
        "verdict": rec.verdict,
        "position": rec.position if rec.verdict == "passed" else None,
        "reason": rec.reason,
        "headline": m.headline,
        "language": rec.language,
        "seats": [
            {
                "seat": r.seat,
                "agent": r.agent,
                "weight": r.weight,
                "personality": r.personality,
                "status": r.status,
                "position": r.position,
                "confidence": r.confidence,
                "changed": r.changed,
            }
            for r in m.rows
        ],
        "minority": m.minority,
        "rounds": rec.debate_rounds,
        "breakdown": m.breakdown,
        "changes": [c.model_dump(mode="json") for c in rec.changes],
        "research": [r.model_dump(mode="json") for r in rec.research],
        "review": rec.review.model_dump(mode="json") if rec.review else None,
        "evidence": [e.model_dump(mode="json") for e in rec.evidence],
        "actions": m.actions,
        "notes": m.notes,
        "redactions": [r.model_dump(mode="json") for r in rec.redactions],
        "usage": [asdict(u) for u in usage(rec)],
        "record": record_path,
    }
