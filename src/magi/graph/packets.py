"""What a judge sees of each candidate, and the leak scan that guards it.

A packet carries the label, the label-named branch, the numstat, the candidate's own
summary, the capped patch and the verification result: never the agent id, kind, model or
CLI. Candidate material is scanned for vendor names and roster ids at presentation time;
``blind.on_leak`` decides: warn keeps the text (redacting would corrupt the artifact under
judgement), redact replaces the term, fail stops the run.
"""

from __future__ import annotations

from typing import Literal

from magi.core.compete.blind import leak_terms, redact_terms, scan_leaks, strip_trailers
from magi.core.compete.prompts import CandidatePacket, judge_prompt
from magi.core.text.sanitize import strip_controls
from magi.graph import test_scan
from magi.graph.context import Context, Stop
from magi.model.run import Candidate, Leak, RunStatus, Verification

TAIL_CHARS = 3000


def verification_text(v: Verification | None) -> str | None:
    if v is None:
        return None
    verdict = "PASSED" if v.passed else ("TIMED OUT" if v.timed_out else "FAILED")
    cmds = "; ".join(v.commands)
    code = "" if v.exit_code is None else f", exit code {v.exit_code}"
    return f"{verdict}{code} — ran: {cmds}\n--- last lines of output ---\n{v.tail[-TAIL_CHARS:]}"


def flags(c: Candidate) -> tuple[str, ...]:
    """What a judge is told about a candidate beside its patch: about its content only."""
    out = [f"changes protected path {p}" for p in c.protected_changed]
    out += test_scan.flag_lines(c)
    out += [f"tampered with git control files (restored by magi): {v}" for v in c.violations]
    # Never how a commit was made: whether a seat committed itself or magi committed what it
    # left is the CLI's habit (codex's own sandbox kept it from committing), and a flag
    # saying so told the judges which CLI wrote the candidate.
    return tuple(out)


_ACTION: dict[str, Literal["warned", "redacted", "failed"]] = {
    "warn": "warned",
    "redact": "redacted",
    "fail": "failed",
}


WITHHELD = "[redacted]"  # a leak's term as a judges' panel holds it (report.before_tally)


def record_leaks(ctx: Context, label: str, found: list[tuple[str, str]]) -> list[Leak]:
    """Record the (where, term) leaks found in ``label``'s material that the run does not
    hold yet, saved before anyone is shown the material; the new ones are returned."""
    action = _ACTION[ctx.config.blind.on_leak]
    with ctx.lock:
        known = {(lk.where, lk.term) for lk in ctx.run.leaks if lk.label == label}
        # A judges' panel holds its leaks with their terms withheld: a place already known.
        withheld = {where for where, term in known if term == WITHHELD}
        new = [
            Leak(label=label, where=where, term=term, action=action)
            for where, term in dict.fromkeys(found)
            if (where, term) not in known and where not in withheld
        ]
        if new:
            ctx.run.leaks.extend(new)
            ctx.save()
    return new


def build(ctx: Context, c: Candidate) -> CandidatePacket:
    """The packet for one candidate, after the leak scan (recorded once per candidate)."""
    base = ctx.run.base_sha or ctx.run.base
    assert c.head is not None  # noqa: S101 - only viable candidates get packets
    patch, cut = ctx.git.patch(base, c.head, max_bytes=ctx.config.graph.patch_max_bytes)
    # The patch is agent-written too: a NUL or an escape in it reaches every judge.
    patch = strip_controls(patch)
    summary = strip_controls(strip_trailers(c.summary))
    terms = leak_terms(ctx.config.agents)
    messages, authors = ctx.git.commit_texts(base, c.head)
    texts = {
        "patch": patch,
        "summary": summary,
        "file name": "\n".join(f.path for f in c.files),
        "commit message": "\n".join(messages),
        "commit author": "\n".join(authors),
    }
    found = [(where, term) for where, text in texts.items() for term in scan_leaks(text, terms)]
    new = record_leaks(ctx, c.label, found)
    for lk in new:
        ctx.event(
            "judge",
            f"candidate {c.label}: author-identifying term {lk.term!r} in its "
            f"{lk.where} ({lk.action})",
            "warn",
        )
    if ctx.config.blind.on_leak == "fail" and any(lk.label == c.label for lk in ctx.run.leaks):
        raise Stop(RunStatus.FAILED, f"blind.on_leak = fail: candidate {c.label} names its author")
    if ctx.config.blind.on_leak == "redact":
        patch, summary = redact_terms(patch, terms), redact_terms(summary, terms)
    return CandidatePacket(
        label=c.label,
        branch=c.branch,
        files=tuple(c.files),
        commits=c.commits,
        summary=summary,
        patch=patch,
        patch_truncated_bytes=cut,
        verification=verification_text(c.verification),
        flags=flags(c),
    )


def context_prompt(ctx: Context, order: list[str], packets: dict[str, CandidatePacket]) -> str:
    """The full judging prompt for one judge, its candidates in its own order."""
    return judge_prompt(
        ctx.run.task.cleaned,
        [packets[label] for label in order if label in packets],
        prompts=ctx.config.prompts,
        language=ctx.config.graph.language,
    )


def viable_labels(ctx: Context) -> list[str]:
    from magi.graph.implement import viable

    return [c.label for c in ctx.run.candidates if viable(c)]


def all_packets(ctx: Context) -> dict[str, CandidatePacket]:
    """Packets of every viable candidate, built once per process."""
    cached = ctx.cache.get("packets")
    if isinstance(cached, dict):
        return cached
    packets = {label: build(ctx, ctx.run.candidate(label)) for label in viable_labels(ctx)}
    ctx.cache["packets"] = packets
    return packets


def judge_context(ctx: Context, seat: str) -> str:
    """The judging prompt of ``seat`` as it was first sent: re-sent when no conversation lives."""
    judge = next(j for j in ctx.run.judges if j.seat == seat)
    return context_prompt(ctx, judge.order, all_packets(ctx))
