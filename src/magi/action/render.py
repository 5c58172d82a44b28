"""The markdown magi posts for a run: the three PR comments, the PR body, the tracking comment.

Stand-in until ``magi.report.markdown`` (the one report model the terminal uses) lands:
every caller goes through ``comments``/``pr_body``/``tracking``, so swapping the renderer is
one module. Nothing here is gated yet; ``magi.action.publish`` passes all of it through
``magi.core.posting.gate`` before it leaves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from magi.report import node_seconds, revealed, seat_usage
from magi.state.model import Run, RunStatus

__all__ = ["Comments", "Links", "comments", "ending", "gate_of", "pr_body", "review_of", "tracking"]


def review_of(run: Run) -> Any:
    """The review loop's record (``Run.review``, from the review loop's schema), or None."""
    return getattr(run, "review", None)


def gate_of(run: Run) -> Any:
    """The gate's record (``Run.gate``), or None."""
    return getattr(run, "gate", None)


@dataclass(frozen=True)
class Links:
    """Where things are on GitHub, for the texts that point at them."""

    repo_url: str
    job_url: str | None = None
    pr_url: str | None = None
    head: str | None = None  # the PR head, for file:line links
    branches: Sequence[str] = ()
    record_ref: str | None = None


@dataclass(frozen=True)
class Comments:
    tally: str
    transcripts: str
    review: str


def ending(run: Run) -> str:
    """One sentence on how the run ended, and what to do about it."""
    reason = run.reason or ""
    s = run.status
    if s is RunStatus.READY:
        return f"Candidate {run.tally.winner if run.tally else '?'} won; review and gate are green."
    if s is RunStatus.VERIFIED_NOOP:
        return f"Verified no-op: every candidate showed nothing is needed. {reason}".strip()
    if s is RunStatus.STALLED:
        return f"Stalled on provider quota: {reason} Comment `/magi retry` once limits reset."
    if s is RunStatus.HELD:
        return f"Held by a budget cap: {reason} Raise `[budget]` and `/magi retry`."
    if s is RunStatus.BLOCKED:
        return f"Blocked: {reason} The pull request stays a draft until this is resolved."
    if s is RunStatus.FAILED:
        return f"Failed: {reason} See the job log; `/magi retry` spends another attempt."
    return f"{s.value}: {reason}".strip()


def _tally(run: Run) -> str:
    lines = ["### magi: the tally", ""]
    t = run.tally
    lines.append(f"Candidates: {', '.join(c.label for c in run.candidates) or 'none'}")
    if t is None:
        lines += ["", f"No tally: {run.reason or run.status.value}."]
        return "\n".join(lines) + "\n"
    if run.judgements:
        lines += ["", "| judge | first ranking |", "|---|---|"]
        lines += [f"| {r.seat} | {' > '.join(r.ranking) or r.status} |" for r in run.judgements]
    if run.votes:
        lines += ["", "| judge | final vote |", "|---|---|"]
        lines += [f"| {v.seat} | {v.vote or v.status} |" for v in run.votes]
    counts = ", ".join(f"{k}: {n}" for k, n in sorted(t.counts.items()))
    lines += ["", f"Counts: {counts or 'none'}; {t.answered} of {t.judges} judges counted."]
    if t.tie_break:
        lines.append(f"Tie-break: {t.tie_break}")
    lines.append(f"**Winner: {t.winner or 'none'}** ({t.reason})")
    if revealed(run):
        lines += ["", "Unblinding (after the tally):", ""]
        lines += [f"- {c.label}: {run.agent_of(c.seat) or '?'}" for c in run.candidates]
        lines += [f"- {j.seat}: {run.agent_of(j.seat) or '?'}" for j in run.judges]
    return "\n".join(lines) + "\n"


def _transcripts(run: Run) -> str:
    lines = ["### magi: the judges", ""]
    if not run.judges:
        return "\n".join([*lines, "No judge sat (uncontested or not reached)."]) + "\n"
    for j in run.judges:
        lines += [f"<details><summary>{j.seat}</summary>", ""]
        for r in [*run.judgements, *run.deliberation]:
            if r.seat == j.seat:
                head = "first ranking" if r.round == 0 else f"deliberation round {r.round}"
                lines += [f"**{head}**: {' > '.join(r.ranking) or r.status}", "", r.text, ""]
        for v in run.votes:
            if v.seat == j.seat:
                lines += [f"**private vote**: {v.vote or v.status}", "", v.rationale, ""]
        lines += ["</details>", ""]
    return "\n".join(lines)


def _link(links: Links, file: str | None, line: int | None) -> str:
    if not file:
        return ""
    if not links.head:
        return f" `{file}:{line}`" if line else f" `{file}`"
    anchor, shown = (f"#L{line}", f"{file}:{line}") if line else ("", file)
    return f" [{shown}]({links.repo_url}/blob/{links.head}/{file}{anchor})"


def _review(run: Run, links: Links) -> str:
    lines = ["### magi: the review", ""]
    review = review_of(run)
    if review is None:
        lines.append("The review loop did not run.")
    else:
        lines.append(f"Outcome: {review.outcome or 'in progress'}. {review.reason or ''}".rstrip())
        for rnd in review.rounds:
            fix = rnd.fix
            adopted = set(fix.adopted) if fix else set()
            rejected = {r.id: r.reason for r in fix.rejected} if fix else {}
            lines += ["", f"#### Round {rnd.round} (`{rnd.head[:10]}`)", ""]
            if not rnd.findings:
                lines.append("No findings.")
            for f in rnd.findings:
                verdict = (
                    "adopted"
                    if f.id in adopted
                    else f"rejected: {rejected[f.id]}"
                    if f.id in rejected
                    else "open"
                )
                lines.append(
                    f"- **{f.id}** ({f.severity}){_link(links, f.file, f.line)}: {f.title}"
                    f" — {verdict}"
                )
            if rnd.e2e is not None:
                e = rnd.e2e
                state = "deferred" if e.deferred else "passed" if e.passed else "failed"
                lines.append(f"- e2e: {state}")
    gate = gate_of(run)
    if gate is not None and gate.ran:
        lines += [
            "",
            f"Gate: {'passed' if gate.passed else 'failed'} on `{(gate.head or '')[:10]}`",
        ]
        lines += [f"- `{r.command}`: exit {r.exit_code}" for r in gate.results]
    lines += [
        "",
        "| seat | turns | tokens in | tokens out | cost | seconds |",
        "|---|---|---|---|---|---|",
    ]
    for seat, row in seat_usage(run).items():
        cost = "" if row["cost_usd"] is None else f"${row['cost_usd']:.2f}"
        lines.append(
            f"| {seat} | {row['turns']} | {row['input_tokens'] or ''} | "
            f"{row['output_tokens'] or ''} | {cost} | {row['seconds']:.0f} |"
        )
    return "\n".join(lines) + "\n"


def comments(run: Run, links: Links) -> Comments:
    """The three PR comments: the tally, the judge transcripts, the review."""
    return Comments(tally=_tally(run), transcripts=_transcripts(run), review=_review(run, links))


def pr_body(run: Run, issue: int, links: Links) -> str:
    """The PR's body: the task, ``Closes #n``, the outcome, links."""
    lines = [
        f"Closes #{issue}",
        "",
        f"**Outcome**: {ending(run)}",
        "",
        "<details><summary>The task</summary>",
        "",
        run.task.cleaned,
        "",
        "</details>",
        "",
    ]
    if links.branches:
        lines.append("Candidate branches: " + ", ".join(f"`{b}`" for b in links.branches))
    if links.record_ref:
        lines.append(f"Run record: `{links.record_ref}`")
    if links.job_url:
        lines.append(f"Job log: {links.job_url}")
    return "\n".join(lines) + "\n"


def tracking(run: Run | None, links: Links, note: str = "") -> str:
    """The issue's tracking comment: the node checklist with times, then the links."""
    lines = ["### magi", ""]
    if run is not None:
        lines.append(f"Run `{run.id}`: **{run.status.value}**")
        lines.append("")
        seconds = node_seconds(run)
        for node, secs in seconds.items():
            lines.append(f"- [x] {node} ({secs:.0f}s)" if secs is not None else f"- [ ] {node}")
        total = sum(s for s in seconds.values() if s is not None)
        lines += ["", f"Total: {total:.0f}s", "", ending(run)]
    if note:
        lines += ["", note]
    lines.append("")
    if links.pr_url:
        lines.append(f"Pull request: {links.pr_url}")
    if links.branches:
        lines.append("Branches: " + ", ".join(f"`{b}`" for b in links.branches))
    if links.record_ref:
        lines.append(f"Record: `{links.record_ref}`")
    if links.job_url:
        lines.append(f"Live log: {links.job_url}")
    return "\n".join(lines) + "\n"
