"""Migrations: named pure steps carry frozen old records forward, or fail naming both versions."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from magi.errors import StateError
from magi.model.run import SCHEMA, Run, RunStatus
from magi.state.migrations import MIGRATIONS, Migration, Record, migrate, record_version

FIXTURES = Path(__file__).parents[1] / "fixtures" / "state"


def frozen(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return data


# A fictional evolution (see fixtures/state/fictional/README.md): two steps, each
# reconstructing a fact from what an older record already held.
def _judge_skipped_from_solo(record: Record) -> Record:
    record["judge_skipped"] = len(record["candidates"]) == 1 and not record["judgements"]
    return record


def _gate_ran_from_gate(record: Record) -> Record:
    record["gate_ran"] = bool(record.get("gate"))
    return record


FICTION = {
    1: Migration("judge_skipped_from_solo", _judge_skipped_from_solo),
    2: Migration("gate_ran_from_gate", _gate_ran_from_gate),
}


def test_schema_1_migrates_to_2_with_authors_held_by_seats() -> None:
    """seats_hold_authors: the kind is stamped and candidates/judges lose their agent copies."""
    record = frozen("run-schema1.json")
    out = migrate(record)
    assert out is not record
    assert out["schema"] == SCHEMA
    assert out["kind"] == "competition"
    run = Run.model_validate(out)
    for c in record["candidates"]:
        assert run.author(c["label"]) == c["agent"]
    for j in record["judges"]:
        assert run.agent_of(j["seat"]) == j["agent"]
        assert "agent" not in next(x for x in out["judges"] if x["seat"] == j["seat"])


def test_schema_2_migrates_to_3_with_jail_and_test_scan_unknown() -> None:
    """A schema-2 run had no jail and no test scan: both read as unknown (None), not none."""
    record = frozen("run-schema2.json")
    out = migrate(record, target=3)
    assert out == {**record, "schema": 3}
    run = Run.model_validate(migrate(record))
    assert run.jail is None
    assert all(c.tests_changed is None for c in run.candidates)


def test_schema_3_ready_run_is_not_read_as_reviewed() -> None:
    """ready_before_review: a schema-3 ``ready`` run was never reviewed; it resumes into review."""
    record = frozen("run-schema3.json")
    assert record["status"] == "ready"
    out = migrate(record)
    run = Run.model_validate(out)
    assert run.schema_version == SCHEMA  # through 4 -> 5 (guards_recorded), which adds nothing
    assert run.status.value == "reviewing"
    assert run.status.resumable
    assert "never reviewed" in (run.reason or "")
    assert (run.review, run.gate, run.merge) == (None, None, None)
    assert run.operator_fixes == []
    moved = ("schema", "status", "reason")
    assert {k: v for k, v in out.items() if k not in moved} == {
        k: v for k, v in record.items() if k not in moved
    }


def test_schema_3_failed_run_keeps_its_status() -> None:
    """Only ``ready`` changed meaning; a failed schema-3 run reads as failed."""
    record = {**frozen("run-schema3.json"), "status": "failed", "reason": "nothing produced"}
    out = migrate(record)
    assert (out["status"], out["reason"]) == ("failed", "nothing produced")


def test_real_registry_only_holds_steps_below_schema() -> None:
    """Every registered step starts below SCHEMA, so each one can actually run."""
    assert all(0 <= version < SCHEMA for version in MIGRATIONS)
    assert len({m.name for m in MIGRATIONS.values()}) == len(MIGRATIONS)


@pytest.mark.parametrize(
    ("source", "target", "expected"),
    [
        ("fictional/v1.json", 2, "fictional/v2.json"),
        ("fictional/v2.json", 3, "fictional/v3.json"),
        ("fictional/v1.json", 3, "fictional/v3.json"),
        ("fictional/v3.json", 3, "fictional/v3.json"),
    ],
)
def test_fictional_records_migrate_step_by_step(source: str, target: int, expected: str) -> None:
    """Frozen records from versions 1 and 2 reach version 3 through the steps in order."""
    assert migrate(frozen(source), target=target, migrations=FICTION) == frozen(expected)


def test_migrate_never_touches_its_input() -> None:
    """Migrations run on a deep copy, even when a step mutates nested parts of its input."""

    def rename_files(record: Record) -> Record:
        for candidate in record["candidates"]:
            candidate["paths"] = candidate.pop("files")
        return record

    record = frozen("fictional/v1.json")
    before = copy.deepcopy(record)
    out = migrate(record, target=2, migrations={1: Migration("rename_files", rename_files)})
    assert out["candidates"] == [{"label": "A", "paths": ["src/app.py"]}]
    assert record == before


def test_migrate_stamps_the_version_itself() -> None:
    """A step touches only its fields; the machinery writes schema n + 1."""
    seen: list[int] = []

    def spy(record: Record) -> Record:
        seen.append(record["schema"])
        return record

    out = migrate(
        {"schema": 1}, target=4, migrations={v: Migration(f"s{v}", spy) for v in (1, 2, 3)}
    )
    assert seen == [1, 2, 3]
    assert out == {"schema": 4}


def test_a_gap_in_the_chain_names_the_missing_step() -> None:
    """A chain with a hole fails before any step runs, naming the step that is missing."""
    with pytest.raises(StateError) as err:
        migrate(frozen("fictional/v1.json"), target=3, migrations={1: FICTION[1]})
    assert str(err.value) == (
        "run.json was written by schema 1; this magi reads schema 3,"
        " and there is no migration from schema 2 to 3"
    )


def test_an_older_record_with_no_migration() -> None:
    """A schema-0 record against the real registry says there is no way to 1."""
    with pytest.raises(StateError, match="no migration from schema 0 to 1"):
        migrate({"schema": 0})


def test_a_newer_record_says_upgrade() -> None:
    """A record from a newer magi is refused, naming both versions."""
    with pytest.raises(StateError) as err:
        migrate(frozen("run-schema99.json"))
    assert str(err.value) == (
        f"run.json was written by schema 99; this magi reads schema {SCHEMA} — upgrade magi"
    )


def test_a_record_without_schema_is_not_schema_1() -> None:
    """The frozen record with no schema key is an error, not a guess."""
    record = frozen("run-no-schema.json")
    with pytest.raises(StateError, match="no 'schema' key"):
        migrate(record)
    # It would validate as the current schema if the key were merely defaulted: the trap.
    assert Run.model_validate(record).schema_version == SCHEMA


@pytest.mark.parametrize("bad", [True, "1", 1.0, None])
def test_schema_must_be_an_integer(bad: object) -> None:
    """A schema that is not a plain integer is refused as it is."""
    with pytest.raises(StateError, match="'schema' must be an integer"):
        record_version({"schema": bad})


def test_a_step_returning_a_non_dict_is_a_registry_bug() -> None:
    """A broken migration fails with its name, not a confusing validation error later."""
    broken = {1: Migration("forgot_return", lambda record: None)}  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match=r"forgot_return \(1 -> 2\) returned NoneType"):
        migrate({"schema": 1}, target=2, migrations=broken)


def test_a_record_from_before_required_checks_reads_with_the_default() -> None:
    """[github] required_checks is additive: a stored config without it reads as "every check"."""
    run = Run.model_validate(migrate(frozen("run-schema1.json")))
    assert run.config.github.required_checks == []


def test_schema_4_reads_as_5_with_nothing_found_and_no_process_tracked() -> None:
    """guards_recorded: a schema-4 record validates as is, with the new fields empty."""
    record = frozen("run-schema4.json")
    out = migrate(record, target=5)
    assert out["schema"] == 5
    run = Run.model_validate(out)
    assert run.processes == []
    assert all(s.violations == [] for s in run.seats.values())
    assert all(c.sabotaged is None for c in run.candidates)


def test_schema_5_reads_as_6_with_its_pr_ending_unknown() -> None:
    """pr_endings_recorded: a schema-5 record reads unchanged; nothing says merged or closed."""
    record = frozen("run-schema5.json")
    out = migrate(record, target=6)
    assert out["schema"] == 6
    assert {k: v for k, v in out.items() if k != "schema"} == {
        k: v for k, v in record.items() if k != "schema"
    }
    run = Run.model_validate(out)
    assert run.merge is None
    assert run.status is RunStatus.READY


def test_a_closed_pr_is_a_finished_run() -> None:
    """closed is an ending: not resumable, and a merge record of mode pr may say so."""
    assert RunStatus.CLOSED.finished
    record = {
        **migrate(frozen("run-schema5.json")),
        "status": "closed",
        "merge": {"mode": "pr", "result": "closed", "pr": 7, "head": "a" * 40},
    }
    run = Run.model_validate(record)
    assert run.merge is not None
    assert run.merge.pr == 7


def test_schema_6_reads_as_7_with_no_landing_recorded() -> None:
    """landing_recorded: a schema-6 record validates as is; ``landing`` reads as not run."""
    record = frozen("run-schema6.json")
    assert "landing" not in record
    out = migrate(record)
    assert out["schema"] == SCHEMA == 7
    assert Run.model_validate(out).landing is None
