"""Named, pure migrations that carry an old ``run.json`` record forward to ``SCHEMA``.

A migration exists only where an old record's meaning can be reconstructed, not guessed
(seed 003: schema 6 -> 7 turned a recorded gate into ``gate_ran = true``; a status a reader
cannot infer from an old record gets no migration, and that record fails loudly instead).
Adding one is one function and one registry entry::

    def _gate_ran_from_gate(record: Record) -> Record:
        record["gate_ran"] = bool(record.get("gate"))
        return record

    MIGRATIONS = {1: Migration("gate_ran_from_gate", _gate_ran_from_gate)}

The function receives a deep copy of the record at version ``n`` and returns the record at
``n + 1``; ``migrate`` stamps the new version itself, so a migration touches only the fields
whose meaning moved. Errors are ``StateError`` without a path; ``Store.load`` adds the file.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from magi.errors import StateError
from magi.model.run import SCHEMA

__all__ = ["MIGRATIONS", "Migration", "Record", "migrate", "record_version"]

Record = dict[str, Any]


@dataclass(frozen=True)
class Migration:
    """One step from version ``n`` (its registry key) to ``n + 1``."""

    name: str  # shown in errors and events, so a migrated run says what was done to it
    apply: Callable[[Record], Record]


def _seats_hold_authors(record: Record) -> Record:
    """Schema 1 -> 2: who sat where lives in ``seats`` alone, and every record has a kind.

    Schema 1 kept an ``agent`` on each candidate and judge beside ``seats[seat].agent``; a
    judge seat that failed over updated only the seat, so the two disagreed and the report
    named the wrong judge. The seat is the source of truth: a seat missing from ``seats``
    is created from the old field, and the duplicates go.
    """
    record["kind"] = "competition"
    seats = record.setdefault("seats", {})
    for entry in [*record.get("candidates", []), *record.get("judges", [])]:
        if not isinstance(entry, dict):
            continue
        agent = entry.pop("agent", None)
        name = entry.get("seat")
        if isinstance(name, str) and isinstance(agent, str) and name not in seats:
            seats[name] = {"name": name, "agent": agent}
    return record


def _jail_unknown(record: Record) -> Record:
    """Schema 2 -> 3: the run's jail and each candidate's test edits are recorded.

    A schema 2 run had no jail and no test scan: both stay absent (None), which reads as
    "not known", never as "none".
    """
    return record


def _ready_before_review(record: Record) -> Record:
    """Schema 3 -> 4: the review loop exists, and ``ready`` means "reviewed, gated, waiting".

    A schema-3 ``ready`` competition was only elected and folded: nothing reviewed it.
    Reading it as ready would claim a review that never happened, so it becomes
    ``reviewing`` (resumable: ``--resume`` runs the loop on its winner), with a reason
    saying why. Every other status kept its meaning; the new fields (review, gate, merge,
    operator_fixes) read by default as "not reached", which is what they were.
    """
    if record.get("kind") == "competition" and record.get("status") == "ready":
        record["status"] = "reviewing"
        record["reason"] = (
            "recorded before the review loop existed: elected and folded, never reviewed;"
            " --resume reviews it"
        )
    return record


def _guards_recorded(record: Record) -> Record:
    """Schema 4 -> 5: seats' violations, candidates' sabotage, verification's dirt, processes.

    Every new field is a list or an optional that a schema-4 magi never had: an empty list
    or None is exactly what such a run recorded (nothing found, no process tracked), so the
    record reads correctly by default and nothing is rewritten.
    """
    return record


def _pr_endings(record: Record) -> Record:
    """Schema 5 -> 6: a run's pull request merged or closed is recorded in the run.

    New: status ``closed`` (the PR was closed unmerged) and, on a ``merge`` record of mode
    ``pr``, the result ``closed`` and the fields ``pr`` and ``head``. A schema-5 magi never
    wrote any of them, and a schema-5 record's PR ending is simply not known: nothing to
    rewrite, and nothing is guessed.
    """
    return record


def _landing_recorded(record: Record) -> Record:
    """Schema 6 -> 7: landing's fix rounds (input, commit, e2e, gate) live in ``landing``.

    A schema-6 magi kept them only as ``artifacts/land-round-<n>.json`` beside the record
    (never in ``run.json``), so ``landing`` absent (None) is what such a record knew.
    """
    return record


# Additions that read correctly by default, with no bump: ``[[agents]] runner_labels`` in a
# run's stored config (absent: ``[github] runner_labels``, where every run before it ran);
# ``[sandbox] egress`` and ``[verify] egress`` (absent: none, as before); a turn's
# ``refused`` (absent: empty; before it a jailed seat kept the host's network, and no proxy
# refused anything); a landing round's ``conflict`` and its input's ``base_ref`` (absent:
# None and "", as every round before the fixer was handed conflicts had none), and
# ``landing.outcome = "conflict"`` (a new value; no older record holds it).

# from-version -> the step that produces from-version + 1.
MIGRATIONS: dict[int, Migration] = {
    1: Migration("seats_hold_authors", _seats_hold_authors),
    2: Migration("jail_and_test_scan_unknown", _jail_unknown),
    3: Migration("ready_before_review", _ready_before_review),
    4: Migration("guards_recorded", _guards_recorded),
    5: Migration("pr_endings_recorded", _pr_endings),
    6: Migration("landing_recorded", _landing_recorded),
}


def record_version(record: Mapping[str, Any]) -> int:
    """The ``schema`` a record declares; a missing or non-integer one is an error, never 1."""
    if "schema" not in record:
        # Guessing "1" for a record that does not say would be exactly the silent half-read
        # the schema number exists to prevent.
        raise StateError("the record has no 'schema' key, so its format is unknown")
    version = record["schema"]
    # bool is an int subclass; `"schema": true` is not a version.
    if not isinstance(version, int) or isinstance(version, bool):
        raise StateError(f"'schema' must be an integer, found {version!r}")
    return version


def migrate(
    record: Mapping[str, Any],
    *,
    target: int = SCHEMA,
    migrations: Mapping[int, Migration] = MIGRATIONS,
) -> Record:
    """Return ``record`` carried to ``target`` through ``migrations``; the input is untouched.

    A record newer than ``target`` was written by a newer magi and is refused: reading it
    would drop whatever meaning the newer fields carry. An older one with a gap in the chain
    is refused too, naming the missing step.
    """
    version = record_version(record)
    if version > target:
        raise StateError(
            f"run.json was written by schema {version}; this magi reads schema {target}"
            " — upgrade magi"
        )
    if version < target:
        missing = next((v for v in range(version, target) if v not in migrations), None)
        if missing is not None:
            raise StateError(
                f"run.json was written by schema {version}; this magi reads schema {target},"
                f" and there is no migration from schema {missing} to {missing + 1}"
            )
    out: Record = copy.deepcopy(dict(record))
    for step in range(version, target):
        migration = migrations[step]
        result = migration.apply(out)
        if not isinstance(result, dict):
            # A registry bug, not a bad record: say which step broke the chain.
            raise TypeError(
                f"migration {migration.name} ({step} -> {step + 1}) returned"
                f" {type(result).__name__}, not a dict"
            )
        result["schema"] = step + 1
        out = result
    return out
