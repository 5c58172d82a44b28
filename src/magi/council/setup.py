"""Seating a council: the panel from config, the cleaned question, evidence and its hashes.

Everything that will leave the machine is cleaned here once, before the first prompt:
hidden characters and HTML comments go, then secrets, email addresses, IP addresses and
connection strings become placeholders; the record lists what was removed, never the
value. Evidence is redacted the same way and then frozen: every seat receives exactly
the same text, and its SHA-256 (and that of the file as read) is in the record.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from datetime import datetime

from magi.core.compete.packet import neutralise
from magi.core.council.prompts import Evidence
from magi.core.council.rules import PanelSeat, degrade, detect_language, seat_name
from magi.core.text.bounds import MARK, cap_bytes, check_task
from magi.core.text.sanitize import clean_task, redact_secrets, stored_original
from magi.core.threads.posting import invisible
from magi.errors import ConfigError, StateError
from magi.model.config import Config
from magi.model.run import RunStatus, Task
from magi.state.council import CouncilRun, CouncilSeat, EvidenceRecord
from magi.state.store import Store, new_run_id

__all__ = ["load_evidence", "new_council", "panel_of", "resolve_panel", "store_evidence"]

MAX_SEATS = 9


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def resolve_panel(
    config: Config, name: str | None, language: str = "en"
) -> tuple[str, float, int, list[CouncilSeat]]:
    """(panel name, threshold, debate rounds, seats) from ``[council]``, else the roster."""
    council = config.council
    catalogue = council.catalogue(language)
    if council.panels:
        chosen = name or council.panel
        if chosen not in council.panels:
            known = ", ".join(sorted(council.panels))
            raise ConfigError(f"no panel named {chosen!r}; declared: {known}", key="council.panels")
        panel = council.panels[chosen]
        seats = [
            CouncilSeat(
                seat=seat_name(i),
                agent=s.agent,
                weight=s.weight,
                personality=s.personality,
                personality_text=catalogue[s.personality] if s.personality else None,
                veto=s.veto,
            )
            for i, s in enumerate(panel.seats)
        ]
        return chosen, panel.threshold, panel.rounds, seats
    if name not in (None, "default"):
        raise ConfigError(
            f"no panel named {name!r}: the config has no [council.panels]", key="council"
        )
    roster = [a.id for a in config.agents][:MAX_SEATS]
    return (
        "default",
        0.5,
        1,
        [CouncilSeat(seat=seat_name(i), agent=a, weight=1) for i, a in enumerate(roster)],
    )


def _clerk(config: Config, seats: Sequence[CouncilSeat], missing: Mapping[str, str]) -> str | None:
    if config.council.clerk is not None:
        return config.council.clerk
    sitting = {s.agent for s in seats if s.seated}
    for a in config.agents:
        if a.id not in sitting and a.id not in missing:
            return a.id
    first = next((s for s in seats if s.seated), None)
    return first.agent if first is not None else None


def new_council(
    *,
    question: str,
    source: str,
    mode: str,
    config: Config,
    panel: str | None,
    missing: Mapping[str, str],
    evidence: Sequence[tuple[str, str, str]],  # (name, source, text as read)
    now: datetime,
    rand: random.Random,
    risk: str | None = None,
    language: str | None = None,
) -> tuple[CouncilRun, list[Evidence]]:
    """A new council record (not yet stored) and the evidence exactly as seats will get it.

    The question is held to ``[graph] task_max_bytes`` as a competition's task is (over it
    is refused before anything is recorded); each evidence body (a file, a PR's diff) is cut
    at ``[graph] patch_max_bytes`` as a judge's patch is, the cut marked. The record keeps
    the question as given but with its secrets redacted: a redacted value is stored nowhere.
    """
    check_task(question, config.graph.task_max_bytes, "question")
    cleaned, removed = clean_task(question)
    cleaned, found = redact_secrets(cleaned, "question", personal=True)
    total = sum(r.count for r in found)
    as_given = stored_original(question, cleaned, total, "question", personal=True)
    lang = language or config.council.language
    if lang == "auto":
        lang = detect_language(cleaned)
    name, threshold, rounds, seats = resolve_panel(config, panel, lang)
    redactions = list(found)
    bodies: list[Evidence] = []
    records: list[EvidenceRecord] = []
    for ev_name, ev_source, raw in evidence:
        # Invisible characters go first (they could split a secret past the scanner); the
        # rest of the evidence is kept byte for byte, HTML comments included (a diff of HTML).
        body, hits = redact_secrets(invisible(raw)[0], f"evidence:{ev_name}", personal=True)
        body = neutralise(body)
        kept, over = cap_bytes(body, config.graph.patch_max_bytes)
        if over:
            body = kept + "\n" + MARK.format(n=len(body) - len(kept)) + "\n"
        redactions += hits
        bodies.append(Evidence(ev_name, body, _sha(body)))
        records.append(
            EvidenceRecord(
                name=ev_name,
                source=ev_source,
                sha256=_sha(body),
                original_sha256=_sha(raw),
                chars=len(body),
            )
        )
    plain = [PanelSeat(s.seat, s.agent, s.weight, s.personality, s.veto) for s in seats]
    sitting, notes, no_council = degrade(plain, missing)
    sat = {p.seat for p in sitting}
    for s in seats:
        if s.seat not in sat:
            s.seated = False
            s.absent = missing.get(s.agent, "not seated")
    rec = CouncilRun(
        id=new_run_id(now, rand),
        created_at=now,
        mode=mode,
        question=Task(
            original=as_given, cleaned=cleaned, source=source, removed=removed, redactions=found
        ),
        language=lang,
        panel=name,
        threshold=threshold,
        min_supporters=(
            config.council.panels[name].min_supporters if name in config.council.panels else 1
        ),
        rounds=rounds,
        risk=risk or config.council.risk,
        panel_seats=seats,
        notes=notes,
        evidence=records,
        redactions=redactions,
        config=config,
    )
    rec.clerk = _clerk(config, seats, missing) if mode != "review" else None
    if no_council is not None:
        rec.verdict = "no_council"
        rec.reason = no_council
        rec.status = RunStatus.FAILED
    return rec, bodies


def panel_of(rec: CouncilRun) -> list[PanelSeat]:
    """The seats that sit (a seat that could not sit is in the record, not the panel).

    A seat that cannot sit does not count in the total: it never joined the council. A seat
    that sat and then failed does (``core.council.rules``).
    """
    return [PanelSeat(s.seat, s.agent, s.weight, s.personality, s.veto) for s in rec.seated()]


def store_evidence(store: Store, rec: CouncilRun, bodies: Sequence[Evidence]) -> None:
    for e in bodies:
        store.write_artifact(rec.id, f"evidence-{e.name}.txt", e.body)


def load_evidence(store: Store, rec: CouncilRun) -> list[Evidence]:
    """The stored evidence, checked against the hashes in the record."""
    out = []
    for e in rec.evidence:
        body = store.read_artifact(rec.id, f"artifacts/evidence-{e.name}.txt")
        if _sha(body) != e.sha256:
            raise StateError(f"evidence {e.name} no longer matches its recorded hash")
        out.append(Evidence(e.name, body, e.sha256))
    return out
