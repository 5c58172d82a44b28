"""The reviewers' material under ``blind.on_leak``: scanned when a round starts, before any seat.

Reviewers are blind like judges (``graph.packets``). What a reviewer is shown of the winner
is scanned for vendor names and roster ids (``core.compete.blind.leak_terms``) when a round starts:
the patch (whole, and the new commits since the head reviewed last), the author's summary,
the file names, the commit messages and identities its checkout shows, and what the previous
round hands on (the e2e output, the findings, the fixer's answers: the fixer is the author,
and may write its own name). ``blind.on_leak`` decides, as for judges:

* warn: each new term is recorded in ``run.leaks`` (``where`` starts with ``review``) and
  reported as a warning; the text is kept.
* redact: recorded too, and every material block of the reviewer's prompt has the terms
  replaced (the read-only checkout itself cannot be rewritten, as a judge's cannot).
* fail: the run stops blocked before any reviewer of the round is asked, the reason naming
  the term and where it was found; the earlier rounds and the leaks stay in the record.

The fixer's material is not scanned: the fixer is the winner's own author seat (it may know
who it is) or ``roles.fixer``, who casts no verdict on an author; what the reviewers wrote
reached them through material already scanned.
"""

from __future__ import annotations

from magi.core.compete.blind import leak_terms, redact_terms, scan_leaks, strip_trailers
from magi.graph.context import Context, Stop
from magi.graph.packets import record_leaks
from magi.graph.winner import e2e_text, winner
from magi.graph.winner import files as winner_files
from magi.model.review import FindingRecord, FixReport, Rejected, ReviewRound
from magi.model.run import FileStat, RunStatus

__all__ = ["redact", "redact_files", "redact_findings", "redact_report", "scan"]


def _texts(ctx: Context, head: str, prev: ReviewRound | None) -> dict[str, str]:
    c = winner(ctx)
    base = ctx.run.base_sha or ctx.run.base
    cap = ctx.config.graph.patch_max_bytes
    patch, _ = ctx.git.patch(base, head, max_bytes=cap)
    if prev is not None and prev.head != head:
        delta, _ = ctx.git.patch(prev.head, head, max_bytes=cap)
        patch += "\n" + delta  # a capped whole patch may cut off the commits a live seat gets
    messages, authors = ctx.git.commit_texts(base, head)
    texts = {
        "patch": patch,
        "summary": strip_trailers(c.summary),
        "file name": "\n".join(f.path for f in winner_files(ctx, base, head)),
        "commit message": "\n".join(messages),
        "commit author": "\n".join(authors),
    }
    if prev is not None:
        texts["e2e output"] = e2e_text(prev.e2e) or ""
        texts["finding"] = "\n".join(
            f"{f.title}\n{f.detail}\n{f.file or ''}" for f in prev.findings
        )
        fix = prev.fix
        texts["fixer answer"] = "\n".join(r.reason for r in fix.rejected) if fix else ""
    return texts


def scan(ctx: Context, head: str, prev: ReviewRound | None, round_no: int) -> None:
    """Record what round ``round_no`` would show reviewers; ``fail`` stops the run here."""
    mode = ctx.config.blind.on_leak
    label = winner(ctx).label
    terms = leak_terms(ctx.config.agents)
    found = [
        (f"review {where}", term)
        for where, text in _texts(ctx, head, prev).items()
        for term in scan_leaks(text, terms)
    ]
    new = record_leaks(ctx, label, found)
    for lk in new:
        ctx.event(
            "review",
            f"round {round_no}: author-identifying term {lk.term!r} in the reviewers' "
            f"material ({lk.where.removeprefix('review ')}; {lk.action})",
            "warn",
        )
    if mode == "fail" and found:
        where, term = found[0]
        raise Stop(
            RunStatus.BLOCKED,
            f"blind.on_leak = fail: the winner's {where.removeprefix('review ')} names "
            f"{term!r}; no reviewer of round {round_no} was asked",
        )


def _terms(ctx: Context) -> list[str] | None:
    return leak_terms(ctx.config.agents) if ctx.config.blind.on_leak == "redact" else None


def redact(ctx: Context, text: str) -> str:
    terms = _terms(ctx)
    return text if terms is None else redact_terms(text, terms)


def redact_files(ctx: Context, files: list[FileStat]) -> list[FileStat]:
    terms = _terms(ctx)
    if terms is None:
        return files
    return [f.model_copy(update={"path": redact_terms(f.path, terms)}) for f in files]


def redact_findings(ctx: Context, findings: list[FindingRecord]) -> list[FindingRecord]:
    terms = _terms(ctx)
    if terms is None:
        return findings
    return [
        f.model_copy(
            update={
                "title": redact_terms(f.title, terms),
                "detail": redact_terms(f.detail, terms),
                "file": redact_terms(f.file, terms) if f.file else f.file,
            }
        )
        for f in findings
    ]


def redact_report(ctx: Context, report: FixReport | None) -> FixReport | None:
    terms = _terms(ctx)
    if terms is None or report is None:
        return report
    rejected = [Rejected(id=r.id, reason=redact_terms(r.reason, terms)) for r in report.rejected]
    return report.model_copy(update={"rejected": rejected})
