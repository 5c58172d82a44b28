"""Research and review modes, and ``run_council``, which runs whichever mode the record names.

Research: every seat alone, findings clustered by the clerk (``F1`` ... without seats),
solo findings judged in one deliberation pass by the other seats only, classified by
``core.council.research``. Review: every seat votes alone; ``core.council.review`` decides
at the record's risk tier and that tier's ``review_quorum``, with the veto only where the
config gives it.
"""

from __future__ import annotations

from magi.core.council.answers import DeliberationVerdicts, ResearchAnswer, ReviewVoteAnswer
from magi.core.council.prompts import deliberation_prompt, research_prompt, review_prompt
from magi.core.council.research import classify_solo, clusters, judges_of
from magi.core.council.review import Ballot, review_verdict
from magi.core.council.rules import grouping
from magi.council.decision import clerk_answer, run_decision
from magi.council.rounds import Council, Job, ask_phase
from magi.council.setup import panel_of
from magi.model.run import RunStatus
from magi.state.council import CouncilRun, ResearchItem, ReviewRecord

__all__ = ["run_council", "run_research", "run_review"]


def _persona(rec: CouncilRun, seat: str) -> str | None:
    return next((s.personality_text for s in rec.panel_seats if s.seat == seat), None)


def run_research(c: Council) -> None:
    rec = c.rec
    panel = panel_of(rec)
    done = c.timed("research")
    jobs = [
        Job(
            s.seat,
            s.agent,
            research_prompt(rec.question.cleaned, c.evidence, _persona(rec, s.seat), rec.language),
        )
        for s in panel
    ]
    answers = ask_phase(c, "research", 0, jobs, ResearchAnswer)
    done()
    answering = [s.seat for s in panel if answers[s.seat] is not None]
    if len(answering) < 2:
        _finish(c, "inconclusive", f"{len(answering)} seat(s) answered; nothing to cross-check")
        return
    flat: list[tuple[str, str, dict[str, str]]] = []  # (label, seat, finding)
    for seat in answering:
        answer = answers[seat]
        assert answer is not None  # noqa: S101 - answering holds only seats with an answer
        for f in answer.findings:
            flat.append((f"F{len(flat) + 1}", seat, {"seat": seat, **f.model_dump()}))
    items = [(label, f["claim"]) for label, _, f in flat]
    clerk = clerk_answer(c, 0, items, "findings")
    groups = grouping([label for label, _ in items], clerk.groups if clerk is not None else None)
    conflicts = clerk.conflicts if clerk is not None else {}
    owner = {label: seat for label, seat, _ in flat}
    claims = {label: f for label, _, f in flat}
    found = clusters(groups, owner, [s.seat for s in panel])
    research = []
    for i, cl in enumerate(found):
        research.append(
            ResearchItem(
                id=f"C{i + 1}",
                claims=[claims[label] for label in cl.labels],
                supporters=list(cl.supporters),
                outcome="adopted" if not cl.solo else "unverified",
                conflict="; ".join(conflicts[label] for label in cl.labels if label in conflicts),
            )
        )
    solo = [(item, cl) for item, cl in zip(research, found, strict=True) if cl.solo]
    if solo:
        done = c.timed("deliberate")
        jobs = []
        for seat in answering:
            mine = [item for item, cl in solo if seat in judges_of(cl, answering)]
            if not mine:
                continue
            shown = [
                (it.id, it.claims[0]["claim"], it.claims[0]["evidence"], it.claims[0]["source"])
                for it in mine
            ]
            prompt = deliberation_prompt(rec.question.cleaned, shown, rec.language)
            agent = next(s.agent for s in panel if s.seat == seat)
            jobs.append(Job(seat, agent, prompt, ids=[it.id for it in mine]))
        verdicts = ask_phase(c, "deliberate", 1, jobs, DeliberationVerdicts)
        for item, cl in solo:
            judges = judges_of(cl, answering)
            for seat in judges:
                verdict = verdicts.get(seat)
                ids = [j.ids for j in jobs if j.seat == seat]
                if verdict is None or not ids:
                    item.missing.append(seat)
                    continue
                got = verdict.by_id(list(ids[0] or ()))
                if item.id in got:
                    item.verdicts[seat] = list(got[item.id])
                else:
                    item.missing.append(seat)
            outcome, note = classify_solo([v[0] for v in item.verdicts.values()])
            item.outcome = outcome
            item.note = note
        done()
    with c.lock:
        rec.research = research
    adopted = sum(1 for r in research if r.outcome == "adopted")
    cond = sum(1 for r in research if r.outcome == "conditional")
    rejected = sum(1 for r in research if r.outcome == "rejected")
    _finish(
        c,
        "passed",
        f"{adopted} adopted, {cond} conditionally adopted, {rejected} rejected "
        f"of {len(research)} findings from {len(answering)} seats",
    )


def run_review(c: Council) -> None:
    rec = c.rec
    panel = panel_of(rec)
    done = c.timed("review")
    jobs = [
        Job(
            s.seat,
            s.agent,
            review_prompt(
                rec.question.cleaned,
                c.evidence,
                _persona(rec, s.seat),
                tier=rec.risk,
                may_veto=s.veto,
                lang=rec.language,
            ),
        )
        for s in panel
    ]
    answers = ask_phase(c, "review", 0, jobs, ReviewVoteAnswer)
    done()
    ballots = []
    for s in panel:
        a = answers[s.seat]
        ballots.append(
            Ballot(
                seat=s.seat,
                weight=s.weight,
                vote=a.vote if a is not None else None,
                may_veto=s.veto,
                veto=a.veto if a is not None else False,
                critical=a is not None and any(f.severity == "critical" for f in a.findings),
                conditions=tuple(a.conditions) if a is not None else (),
            )
        )
    # The quorum as configured when the council started (the record holds that config).
    quorum = rec.config.council.review_quorum.of(rec.risk)
    result = review_verdict(ballots, rec.risk, quorum)  # type: ignore[arg-type]
    with c.lock:
        rec.review = ReviewRecord(
            tier=rec.risk,
            approve=result.approve,
            reject=result.reject,
            counted=list(result.counted),
            abstained=list(result.abstained),
            vetoed_by=list(result.vetoed_by),
            ignored_vetoes=list(result.ignored_vetoes),
            dissent=list(result.dissent),
            reason=result.reason,
            conditions=list(result.conditions),
            quorum=result.quorum,
        )
    position = {"passed": "approve", "conditional": "conditional", "rejected": "reject"}.get(
        result.verdict
    )
    _finish(c, result.verdict, result.reason, position)


def _finish(c: Council, verdict: str, reason: str, position: str | None = None) -> None:
    with c.lock:
        c.rec.verdict = verdict  # type: ignore[assignment]
        c.rec.reason = reason
        c.rec.position = position
        c.save()


def run_council(c: Council) -> CouncilRun:
    """Run the record's mode to a verdict; a record that has one is returned as it is."""
    rec = c.rec
    if rec.verdict is not None:
        return rec
    rec.status = RunStatus.DELIBERATING
    c.persist()
    {"decision": run_decision, "research": run_research, "review": run_review}[rec.mode](c)
    with c.lock:
        rec.status = RunStatus.READY
        c.save()
    return rec
