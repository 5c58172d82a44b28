"""The report's review, gate and merge sections, as lines and as JSON: pure reads of the record.

They come after the tally in pipeline order, so naming who sat in a reviewer seat keeps the
blind rule (no author before the tally). A round short of reviewers is labelled incomplete
with the missing seats; an e2e is shown with the commit it checked, or as deferred; minor
findings nobody adopted close the report as follow-ups, attributed to the run and finding id.
"""

from __future__ import annotations

from typing import Any

from magi.core.review.loop import follow_ups
from magi.model.review import E2eResult, ReviewRound
from magi.model.run import Run

__all__ = ["follow_up_lines", "review_json", "review_rows"]


def _e2e(e: E2eResult | None) -> str:
    if e is None:
        return "not run"
    if e.deferred:
        return "deferred (blocking findings open)"
    verdict = "green" if e.passed else ("timed out" if e.timed_out else f"red (exit {e.exit_code})")
    return f"{verdict} on {(e.head or '?')[:12]}"


def _round(rnd: ReviewRound) -> list[tuple[str, str]]:
    gap = f", INCOMPLETE: {', '.join(rnd.missing)} never answered" if rnd.missing else ""
    head = f"{len(rnd.answered)} of {len(rnd.expected)} reviewers answered{gap}"
    rows = [(f"round {rnd.round}", f"{rnd.head[:12]}: {head}; e2e {_e2e(rnd.e2e)}")]
    for f in rnd.findings:
        where = f" {f.file}:{f.line}" if f.file and f.line else (f" {f.file}" if f.file else "")
        rows.append((f"  {f.id}", f"{f.severity}{where}: {f.title}"))
    if rnd.fix is not None:
        rej = ", ".join(r.id for r in rnd.fix.rejected) or "none"
        moved = "new tree" if rnd.fix.progressed else "no new tree"
        adopted = ", ".join(rnd.fix.adopted) or "none"
        lost = "" if rnd.fix.status == "ok" else f"turn {rnd.fix.status}; "
        rows.append(("  fix", f"{lost}adopted {adopted}; rejected {rej}; {moved} (git)"))
    return rows


def review_rows(run: Run) -> list[tuple[str, str]]:
    """(label, text) rows: rounds, how the loop ended, operator fixes, gate, merge."""
    rows: list[tuple[str, str]] = []
    rv = run.review
    if rv is not None:
        for rnd in rv.rounds:
            rows += _round(rnd)
        if rv.outcome:
            rows.append(("loop", f"{rv.outcome}: {rv.reason or ''}"))
    for op in run.operator_fixes:
        ids = ", ".join(f.id for f in op.findings)
        moved = "new tree" if op.report.progressed else "no new tree"
        rows.append(
            ("magi fix", f"{ids}: adopted {', '.join(op.report.adopted) or 'none'}; {moved}")
        )
    g = run.gate
    if g is not None and g.ran:
        verdict = "passed" if g.passed else "FAILED"
        cmds = f"{len(g.commands)} command(s)" if g.commands else "no commands configured"
        rows.append(("gate", f"{verdict} on {(g.head or '?')[:12]} ({cmds})"))
        rows += [(f"  $ {r.command}", f"exit {r.exit_code}") for r in g.results]
    m = run.merge
    if m is not None:
        pr = f"pull request #{m.pr} " if m.pr is not None else ""
        text = {
            "printed": m.command or "",
            "merged": f"{pr}squashed onto {m.base} as {(m.commit or '')[:12]}",
            "closed": f"{pr}closed unmerged",
        }
        rows.append((f"merge {m.mode}", text.get(m.result, f"blocked: {m.detail}")))
    return rows


def follow_up_lines(run: Run) -> list[str]:
    """Minor findings nobody adopted, attributed to the run and the finding id."""
    return [
        f"{run.id} {f.id}: {f.title}" + (f" ({f.file}:{f.line})" if f.file and f.line else "")
        for f in follow_ups(run.review, run.operator_fixes)
    ]


def review_json(run: Run) -> dict[str, Any]:
    """The ``review``, ``gate``, ``merge`` and ``follow_ups`` keys of ``show --json``."""
    return {
        "review": run.review.model_dump(mode="json") if run.review else None,
        "operator_fixes": [o.model_dump(mode="json") for o in run.operator_fixes],
        "gate": run.gate.model_dump(mode="json") if run.gate else None,
        "merge_record": run.merge.model_dump(mode="json") if run.merge else None,
        "follow_ups": [
            f.model_dump(mode="json") | {"run": run.id}
            for f in follow_ups(run.review, run.operator_fixes)
        ],
    }
