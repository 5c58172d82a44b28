"""The winner's road as the run summary's markdown sections: review rounds, fixes, gate, merge.

One renderer for ``magi show --markdown`` and the PR (``magi.action.publish_job.render``
adds only the links), so what the terminal previews is what the PR carries. Every finding
keeps the id magi gave it; file:line becomes a link to the PR's head when there is one. A
round short of reviewers says so and names the missing seats; an e2e says which commit it
checked, or that it was deferred, never green by omission. Agent text goes through
``gfm.inline``.
"""

from __future__ import annotations

from urllib.parse import quote as url_quote

from magi.core.review.loop import follow_ups
from magi.model.review import E2eResult, FindingRecord, ReviewRound
from magi.model.run import Run
from magi.report.gfm import Safe, Section, inline

__all__ = ["review_sections"]


def quote_url(path: str) -> str:
    """A repository path as a URL path (agent-chosen names stay inside the link)."""
    return url_quote(path, safe="/")


def _where(f: FindingRecord, repo_url: str | None, head: str | None) -> str:
    if not f.file:
        return ""
    shown = inline(f"{f.file}:{f.line}" if f.line else f.file)
    if not (repo_url and head):
        return f" `{shown}`"
    anchor = f"#L{f.line}" if f.line else ""
    return f" [{shown}]({repo_url}/blob/{head}/{quote_url(f.file)}{anchor})"


def _e2e(e: E2eResult | None) -> str:
    if e is None:
        return "e2e: not reached"
    if e.deferred:
        return "e2e: deferred (blocking findings open)"
    verdict = (
        "passed" if e.passed else ("timed out" if e.timed_out else f"failed (exit {e.exit_code})")
    )
    return f"e2e: {verdict} on `{(e.head or '?')[:12]}`"


def _round(rnd: ReviewRound, repo_url: str | None, head: str | None) -> Section:
    fix = rnd.fix
    adopted = set(fix.adopted) if fix else set()
    rejected = {r.id: r.reason for r in fix.rejected} if fix else {}
    answered = f"{len(rnd.answered)} of {len(rnd.expected)} reviewers answered"
    if rnd.missing:
        answered += f"; **incomplete**: {inline(', '.join(rnd.missing))} never answered"
    lines = [f"- {answered}"]
    for f in rnd.findings:
        if f.id in adopted:
            verdict = "adopted"
        elif f.id in rejected:
            verdict = f"rejected: {inline(rejected[f.id])}"
        else:
            verdict = "open"
        lines.append(
            f"- **{inline(f.id)}** ({inline(f.severity)}){_where(f, repo_url, head)}: "
            f"{inline(f.title)} — {verdict}"
        )
    if not rnd.findings:
        lines.append("- no findings")
    lines.append(f"- {_e2e(rnd.e2e)}")
    if fix is not None:
        moved = "a new tree" if fix.progressed else "no new tree"
        lost = "" if fix.status == "ok" else f"turn {inline(fix.status)}, "
        lines.append(f"- fix by {inline(fix.seat)}: {lost}{moved} (measured with git)")
    title = f"Round {rnd.round} ({rnd.head[:10]})"  # titles are escaped: no code spans
    return Section(title, Safe("\n".join(lines) + "\n"), True)


def review_sections(
    run: Run, repo_url: str | None = None, head: str | None = None
) -> list[Section]:
    """The review loop, ``magi fix`` rounds, the gate, the merge and the follow-ups of ``run``.

    ``repo_url`` and ``head`` (the PR's) turn file:line into links; without them they are
    code spans. Empty before the review loop ran.
    """
    review = run.review
    if review is None:
        return []
    outcome = f"Outcome: {inline(review.outcome or 'in progress')}"
    if review.reason:
        outcome += f". {inline(review.reason)}"
    sections = [Section("Review loop", Safe(outcome + "\n"))]
    sections += [_round(rnd, repo_url, head) for rnd in review.rounds]
    if run.operator_fixes:
        lines = []
        for op in run.operator_fixes:
            ids = ", ".join(f.id for f in op.findings)
            moved = "a new tree" if op.report.progressed else "no new tree"
            took = ", ".join(op.report.adopted) or "none"
            lines.append(f"- {inline(ids)}: adopted {inline(took)}; {moved}")
        sections.append(Section("magi fix", Safe("\n".join(lines) + "\n")))
    gate = run.gate
    if gate is not None and gate.ran:
        rows = [f"- `{inline(r.command)}`: exit {r.exit_code}" for r in gate.results]
        verdict = "passed" if gate.passed else "failed"
        where = f" on {(gate.head or '?')[:12]}"
        body = "\n".join(rows or ["- no commands configured"])
        sections.append(Section(f"Gate: {verdict}{where}", Safe(body + "\n")))
    if follow := follow_ups(run.review, run.operator_fixes):
        lines = [f"- {inline(f.id)}: {inline(f.title)}{_where(f, repo_url, head)}" for f in follow]
        sections.append(
            Section("Follow-ups (minor findings nobody adopted)", Safe("\n".join(lines) + "\n"))
        )
    return sections
