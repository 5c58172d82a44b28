"""One phase of a council: every seat asked at once, answers recorded, finished seats skipped.

A phase is (name, round). Each seat's answer is written to the record, and the record
saved, as it arrives, so a killed council resumes at the seat boundary: an answer already
recorded (ok, invalid or error) is reused, revalidated from the record; a seat that never
answered, or was lost to a quota or a timeout, is asked again. One seat, one round, one
answer: a failed seat is not re-asked inside the same run (seed 001, REQ-010).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, TypeVar

from pydantic import ValidationError

from magi.core.council.clean import answer_cleaner
from magi.core.council.prompts import Evidence, with_notes
from magi.core.text.answers import Answer
from magi.council.asker import Asker, Reply
from magi.model.run import Event, NodeTiming
from magi.state.council import CouncilAnswer, CouncilRun

__all__ = ["RETRYABLE", "Council", "Job", "ask_phase"]

M = TypeVar("M", bound=Answer)
RETRYABLE = frozenset({"pending", "quota", "timeout"})


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass
class Council:
    """The record, the port, and how to persist: what every phase is handed."""

    rec: CouncilRun
    ask: Asker
    save: Callable[[], None] = lambda: None
    max_parallel: int = 9
    clock: Callable[[], datetime] = _utcnow
    lock: threading.RLock = field(default_factory=threading.RLock)
    evidence: list[Evidence] = field(default_factory=list)  # exactly what every seat gets
    on_phase: Callable[[str], None] = lambda _name: None  # progress: a phase begins
    notes: str = ""  # [prompts] all: appended to every prompt, never replacing it

    def persist(self) -> None:
        with self.lock:
            self.save()

    def event(
        self, node: str, message: str, level: Literal["info", "warn", "error"] = "info"
    ) -> None:
        with self.lock:
            self.rec.events.append(Event(at=self.clock(), node=node, message=message, level=level))

    def timed(self, node: str) -> Callable[[], None]:
        """Start ``node``'s timing; call the result when it ends."""
        start = self.clock()
        with self.lock:
            self.rec.timings.setdefault(node, NodeTiming(started_at=start))

        def done() -> None:
            end = self.clock()
            with self.lock:
                t = self.rec.timings[node]
                t.finished_at = end
                t.seconds = round((end - t.started_at).total_seconds(), 3)

        return done


@dataclass(frozen=True)
class Job:
    seat: str
    agent: str
    prompt: str
    labels: Sequence[str] | None = None
    ids: Sequence[str] | None = None


def _reuse(c: Council, phase: str, round_no: int, job: Job, shape: type[M]) -> Reply | None:
    have = c.rec.answer(phase, round_no, job.seat)
    if have is None or have.status in RETRYABLE:
        return None
    if have.status != "ok" or have.data is None:
        return Reply(None, have.status, have.error or "")
    context = {"labels": job.labels, "finding_ids": job.ids}
    try:
        return Reply(shape.model_validate(have.data, context=context), "ok")
    except ValidationError:
        return None  # a record this magi cannot read back: ask again rather than guess


def _cleaned(
    c: Council, phase: str, round_no: int, job: Job, reply: Reply, shape: type[M]
) -> Reply:
    """``reply`` with its answer cleaned (``core.council.clean``), re-validated; what went
    is recorded as kinds and counts, and said as an event."""
    if reply.answer is None:
        return reply
    rec = c.rec
    clean = answer_cleaner(rec.config.agents, rec.question.cleaned, rec.config.graph.text_max_chars)
    data, found = clean(reply.answer.model_dump(mode="json"))
    if not found:
        return reply
    where = f"answer:{job.seat}:{phase}" + (f":{round_no}" if round_no else "")
    with c.lock:
        rec.redactions += found.redactions(where)
    what = [f"{r.count} {r.kind}" for r in found.redactions(where)] + found.notes
    c.event(phase, f"{job.seat}: cleaned before it is relayed: {'; '.join(what)}", "warn")
    context = {"labels": job.labels, "finding_ids": job.ids}
    try:
        return Reply(shape.model_validate(data, context=context), "ok")
    except ValidationError as exc:
        return Reply(None, "invalid", f"the answer no longer fits its shape once cleaned: {exc}")


def _record(c: Council, phase: str, round_no: int, seat: str, reply: Reply) -> None:
    data = reply.answer.model_dump(mode="json") if reply.answer is not None else None
    entry = CouncilAnswer(
        phase=phase,
        round=round_no,
        seat=seat,
        status=reply.status,
        error=reply.error or None,
        data=data,
    )
    with c.lock:
        c.rec.answers = [
            a
            for a in c.rec.answers
            if not (a.phase == phase and a.round == round_no and a.seat == seat)
        ] + [entry]
        c.save()


def ask_phase(
    c: Council, phase: str, round_no: int, jobs: Sequence[Job], shape: type[M]
) -> dict[str, M | None]:
    """Each job's validated answer (None: no answer), by seat, asking only what is missing."""
    c.on_phase(phase if round_no == 0 else f"{phase} {round_no}")
    out: dict[str, M | None] = {}
    todo: list[Job] = []
    for job in jobs:
        reused = _reuse(c, phase, round_no, job, shape)
        if reused is None:
            todo.append(job)
        else:
            out[job.seat] = reused.answer  # type: ignore[assignment]

    def one(job: Job) -> tuple[str, Reply]:
        reply = c.ask(
            seat=job.seat,
            agent=job.agent,
            node=phase,
            prompt=with_notes(job.prompt, c.notes, c.rec.language),
            shape=shape,
            labels=job.labels,
            ids=job.ids,
        )
        reply = _cleaned(c, phase, round_no, job, reply, shape)
        _record(c, phase, round_no, job.seat, reply)
        return job.seat, reply

    if len(todo) == 1 or c.max_parallel == 1:
        results = [one(job) for job in todo]
    elif todo:
        with ThreadPoolExecutor(max_workers=min(c.max_parallel, len(todo))) as pool:
            results = list(pool.map(one, todo))
    else:
        results = []
    for seat, reply in results:
        out[seat] = reply.answer  # type: ignore[assignment]
        if reply.status != "ok":
            c.event(phase, f"{seat}: no answer ({reply.status}) {reply.error}".rstrip(), "warn")
    return {job.seat: out.get(job.seat) for job in jobs}
