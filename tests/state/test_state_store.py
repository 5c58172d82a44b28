"""The run store: ids, atomic saves, loud loads, run references and artifacts."""

from __future__ import annotations

import json
import os
import random
import shutil
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import platformdirs
import pytest

from magi.errors import StateError
from magi.model.run import SCHEMA, Run, RunStatus, Task
from magi.state import store as store_module
from magi.state.migrations import migrate
from magi.state.store import Store, magi_home, new_run_id

FIXTURES = Path(__file__).parents[1] / "fixtures" / "state"
FIXTURE_ID = "20260912-053352-49ad"


def make_run(run_id: str = "20260912-053352-49ad") -> Run:
    return Run(
        id=run_id,
        created_at=datetime(2026, 9, 12, 5, 33, 52, tzinfo=UTC),
        repo="/src/pager",
        base="main",
        seed=1,
        task=Task(original="fix it", cleaned="fix it"),
    )


def plant(store: Store, run_id: str, text: str) -> Path:
    """Put a raw run.json on disk, bypassing the store's checks."""
    d = store.run_dir(run_id)
    d.mkdir(parents=True)
    (d / "run.json").write_text(text, encoding="utf-8")
    return d / "run.json"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "home")


# --- home and ids ---------------------------------------------------------------------------


def test_magi_home_prefers_the_environment(tmp_path: Path) -> None:
    """$MAGI_HOME wins over the platform directory."""
    assert magi_home({"MAGI_HOME": str(tmp_path)}) == tmp_path


def test_magi_home_falls_back_to_platform_dir() -> None:
    """An unset or empty $MAGI_HOME means the platform's user data dir."""
    expected = Path(platformdirs.user_data_dir("magi"))
    assert magi_home({}) == expected
    assert magi_home({"MAGI_HOME": ""}) == expected


def test_new_run_id_is_time_then_four_hex() -> None:
    """Ids read YYYYMMDD-HHMMSS-xxxx from the clock and randomness passed in."""
    now = datetime(2026, 9, 12, 5, 33, 52)
    assert new_run_id(now, lambda: 0x49AD) == "20260912-053352-49ad"
    assert new_run_id(now, lambda: 7) == "20260912-053352-0007"


def test_new_run_id_is_reproducible_from_a_seeded_random() -> None:
    """The same seed gives the same id; the suffix is 4 lowercase hex digits."""
    now = datetime(2026, 9, 12, 5, 33, 52)
    a = new_run_id(now, random.Random(42))
    assert a == new_run_id(now, random.Random(42))
    assert a.startswith("20260912-053352-")
    assert len(a.rsplit("-", 1)[1]) == 4


def test_new_run_id_takes_aware_times_in_utc() -> None:
    """An aware clock reading is converted to UTC, so ids from different zones sort by time."""
    jst = timezone(timedelta(hours=9))
    assert new_run_id(datetime(2026, 9, 12, 11, 51, 53, tzinfo=jst), lambda: 1).startswith(
        "20260912-025153-"
    )


def test_new_run_id_refuses_a_suffix_that_does_not_fit() -> None:
    """A random source returning more than 16 bits is a bug, not a longer id."""
    with pytest.raises(ValueError, match="0xffff"):
        new_run_id(datetime(2026, 1, 1), lambda: 0x10000)


def test_run_dir_refuses_anything_but_a_run_id(store: Store) -> None:
    """An id is a path component, so nothing else may become one."""
    for bad in ("../etc", "20260912-053352-49AD", "x", ""):
        with pytest.raises(StateError, match="not a run id"):
            store.run_dir(bad)


# --- create and save ------------------------------------------------------------------------


def test_create_then_load_round_trips(store: Store) -> None:
    """What was created loads back equal, under runs/<id>/run.json."""
    run = make_run()
    d = store.create(run)
    assert d == store.runs_dir / run.id
    assert json.loads((d / "run.json").read_text())["schema"] == SCHEMA
    assert store.load(run.id) == run


def test_create_refuses_an_existing_id(store: Store) -> None:
    """A second create with the same id fails and leaves the first record alone."""
    store.create(make_run())
    other = make_run()
    other.seed = 99
    with pytest.raises(StateError, match="already exists"):
        store.create(other)
    assert store.load(other.id).seed == 1


def test_create_leaves_no_directory_when_the_first_save_fails(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run without a record is not a run: the directory goes when the first save fails."""

    def fail(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(StateError, match="No space left"):
        store.create(make_run())
    assert not store.run_dir(make_run().id).exists()


def test_save_updates_the_record(store: Store) -> None:
    """A save after a change is what the next load sees, save after save (the later ones
    swap the record with its spare: the spare holds the record before, never the next)."""
    run = make_run()
    d = store.create(run)
    assert sorted(p.name for p in d.iterdir()) == ["lock", "run.json"]
    for status in (RunStatus.JUDGING, RunStatus.VOTING, RunStatus.FAILED):
        before = (d / "run.json").read_bytes()
        run.status = status
        store.save(run)
        assert store.load(run.id).status is status
        assert (d / ".run.json.spare").read_bytes() == before


def test_a_fifo_planted_as_the_spare_blocks_no_save(store: Store) -> None:
    """A FIFO where the spare goes is not opened to wait for a reader: the save writes the
    record the usual way."""
    run = make_run()
    d = store.create(run)
    os.mkfifo(d / ".run.json.spare")
    run.status = RunStatus.JUDGING
    store.save(run)
    assert store.load(run.id).status is RunStatus.JUDGING


def test_a_link_planted_as_the_spare_is_not_followed(store: Store, tmp_path: Path) -> None:
    """The spare is opened without following links: a save writes the record, not the link's
    target, and the link is replaced."""
    run = make_run()
    d = store.create(run)
    target = tmp_path / "elsewhere"
    target.write_text("theirs\n")
    (d / ".run.json.spare").symlink_to(target)
    run.status = RunStatus.JUDGING
    store.save(run)
    assert target.read_text() == "theirs\n"
    assert store.load(run.id).status is RunStatus.JUDGING


@pytest.mark.parametrize(
    ("swaps", "owner", "target"),
    [
        (True, os, "fsync"),
        (True, store_module, "_exchange"),
        (False, os, "fsync"),
        (False, os, "replace"),
    ],
    ids=["swapped-fsync", "swapped-exchange", "replaced-fsync", "replaced-rename"],
)
def test_failed_save_keeps_the_old_record_and_no_temp_file(
    store: Store, monkeypatch: pytest.MonkeyPatch, swaps: bool, owner: object, target: str
) -> None:
    """A save that fails mid-way (fsync, the swap or the rename) leaves the previous file
    whole and nothing beside it, whether the save swaps names or renames a temp file."""
    run = make_run()
    d = store.create(run)
    run.status = RunStatus.JUDGING
    store.save(run)  # a second save: the spare holds the first record now
    (d / ".run.json.spare").unlink(missing_ok=True)
    before = (d / "run.json").read_bytes()

    def fail(*_: object) -> None:
        raise OSError(5, "Input/output error")

    if not swaps:  # a kernel or file system without renameat2: the temp file and rename
        monkeypatch.setattr(store_module, "_RENAMEAT2", None)
    monkeypatch.setattr(owner, target, fail)
    run.status = RunStatus.FAILED
    with pytest.raises(StateError, match="Input/output error") as err:
        store.save(run)
    assert err.value.path == d / "run.json"
    monkeypatch.undo()
    assert (d / "run.json").read_bytes() == before
    assert sorted(p.name for p in d.iterdir()) == ["lock", "run.json"]


def test_save_refuses_an_uncreated_run(store: Store) -> None:
    """save never creates a run by accident; create does."""
    with pytest.raises(StateError, match="create it before saving"):
        store.save(make_run())


def test_save_refuses_a_record_stamped_with_another_schema(store: Store) -> None:
    """A record claiming a schema this magi does not write is never written."""
    run = make_run()
    store.create(run)
    run.schema_version = SCHEMA + 1
    with pytest.raises(StateError, match=f"stamped schema {SCHEMA + 1}"):
        store.save(run)


# --- load -----------------------------------------------------------------------------------


def test_frozen_schema_1_record_loads_and_reads_the_same(store: Store) -> None:
    """The frozen schema-1 fixture loads through its migrations, and saves as what it loaded."""
    d = store.runs_dir / FIXTURE_ID
    d.mkdir(parents=True)
    shutil.copy(FIXTURES / "run-schema1.json", d / "run.json")
    run = store.load_run(FIXTURE_ID)
    assert run.tally is not None
    assert run.tally.winner == "B"
    assert [v.vote for v in run.votes] == ["B", "B", None]
    migrated = migrate(json.loads((FIXTURES / "run-schema1.json").read_text()))
    expected = Run.model_validate(migrated).model_dump(mode="json", by_alias=True)
    assert run.model_dump(mode="json", by_alias=True) == expected
    store.save(run)
    assert json.loads((d / "run.json").read_text()) == expected


def test_a_recorded_config_that_no_longer_validates_names_the_key_and_both_schemas(
    store: Store,
) -> None:
    """A config this magi cannot read is a state error naming the key, never a traceback."""
    record = json.loads((FIXTURES / "run-schema1.json").read_text())
    record["config"] = {"graph": {"judgs": 3}}
    plant(store, FIXTURE_ID, json.dumps(record))
    with pytest.raises(StateError) as err:
        store.load(FIXTURE_ID)
    message = str(err.value)
    assert "config.graph.judgs" in message
    assert "written by schema 1" in message
    assert f"reads schema {SCHEMA}" in message


def test_load_of_a_missing_run_names_the_file(store: Store) -> None:
    """An id with no record says so, with the path it looked at."""
    with pytest.raises(StateError, match="no run 20260101-000000-0000") as err:
        store.load("20260101-000000-0000")
    assert err.value.path == store.runs_dir / "20260101-000000-0000" / "run.json"


def test_load_of_invalid_json_gives_line_and_column(store: Store) -> None:
    """Broken JSON is reported with its line and column and the file."""
    path = plant(store, "20260101-000000-0000", '{\n  "schema": 1,\n  "id": oops\n}')
    with pytest.raises(StateError, match="line 3, column 9") as err:
        store.load("20260101-000000-0000")
    assert str(path) in str(err.value)


def test_load_of_an_unreadable_record(store: Store) -> None:
    """Bytes that are not UTF-8 are an unreadable file, not a crash."""
    d = store.run_dir("20260101-000000-0000")
    d.mkdir(parents=True)
    (d / "run.json").write_bytes(b"\xff\xfe{}")
    with pytest.raises(StateError, match="cannot read"):
        store.load("20260101-000000-0000")


def test_load_of_a_non_object(store: Store) -> None:
    """A JSON array is not a record."""
    plant(store, "20260101-000000-0000", "[1, 2]")
    with pytest.raises(StateError, match="expected a JSON object, found list"):
        store.load("20260101-000000-0000")


def test_load_of_a_newer_schema_names_both_versions(store: Store) -> None:
    """A record from a newer magi is refused with both versions and the file."""
    path = plant(store, "20310101-120000-beef", (FIXTURES / "run-schema99.json").read_text())
    with pytest.raises(StateError) as err:
        store.load("20310101-120000-beef")
    assert str(err.value) == (
        f"{path}: run.json was written by schema 99; this magi reads schema {SCHEMA} — upgrade magi"
    )


def test_load_of_a_record_without_schema_is_an_error(store: Store) -> None:
    """A missing schema key is unknown, never read as schema 1."""
    plant(store, "20260101-090000-0a0a", (FIXTURES / "run-no-schema.json").read_text())
    with pytest.raises(StateError, match="no 'schema' key"):
        store.load("20260101-090000-0a0a")


def test_load_of_an_older_schema_without_migration(store: Store) -> None:
    """An old record with no migration path names the missing step."""
    record = json.loads((FIXTURES / "run-schema1.json").read_text()) | {"schema": 0}
    plant(store, FIXTURE_ID, json.dumps(record))
    with pytest.raises(StateError, match="no migration from schema 0 to 1"):
        store.load(FIXTURE_ID)


def test_load_names_the_field_that_does_not_validate(store: Store) -> None:
    """Validation errors name the field path, list indices included."""
    record = json.loads((FIXTURES / "run-schema1.json").read_text())
    del record["candidates"][1]["label"]
    record["votes"][0]["surprise"] = True
    plant(store, FIXTURE_ID, json.dumps(record))
    with pytest.raises(StateError) as err:
        store.load(FIXTURE_ID)
    assert "candidates[1].label: Field required" in str(err.value)
    assert "votes[0].surprise: Extra inputs are not permitted" in str(err.value)


def test_load_refuses_a_record_under_another_runs_directory(store: Store) -> None:
    """A copied directory would let one run's saves overwrite another's record."""
    plant(store, "20260101-000000-0000", (FIXTURES / "run-schema1.json").read_text())
    with pytest.raises(StateError, match=f"record says id {FIXTURE_ID}"):
        store.load("20260101-000000-0000")


# --- listing and references -----------------------------------------------------------------


def populate(store: Store, *ids: str) -> None:
    for run_id in ids:
        store.create(make_run(run_id))


def test_list_ids_newest_first_and_only_real_runs(store: Store) -> None:
    """Runs sort newest first; stray names and record-less directories are not runs."""
    populate(store, "20260101-000000-aaaa", "20260301-000000-bbbb", "20260201-000000-cccc")
    (store.runs_dir / "notes").mkdir()
    (store.runs_dir / "20260401-000000-dddd").mkdir()
    assert store.list_ids() == [
        "20260301-000000-bbbb",
        "20260201-000000-cccc",
        "20260101-000000-aaaa",
    ]
    assert store.latest() == "20260301-000000-bbbb"


def test_an_empty_home_has_no_runs(store: Store) -> None:
    """No runs directory yet means no runs and no latest."""
    assert store.list_ids() == []
    assert store.latest() is None


def test_resolve_full_id_suffix_and_id_prefix(store: Store) -> None:
    """A full id, a unique suffix prefix, or a unique id prefix all resolve."""
    populate(store, "20260912-053352-49ad", "20260912-062629-bab1")
    assert store.resolve("20260912-053352-49ad") == "20260912-053352-49ad"
    assert store.resolve("49ad") == "20260912-053352-49ad"
    assert store.resolve("ba") == "20260912-062629-bab1"
    assert store.resolve("20260912-06") == "20260912-062629-bab1"
    assert store.resolve(" 49 ") == "20260912-053352-49ad"


def test_resolve_reads_short_hex_as_a_suffix_first(store: Store) -> None:
    """'2026' names the run whose suffix starts 2026, not every run of the year."""
    populate(store, "20260101-000000-2026", "20260102-000000-aaaa")
    assert store.resolve("2026") == "20260101-000000-2026"


def test_resolve_ambiguous_lists_the_candidates(store: Store) -> None:
    """An ambiguous reference lists every run it could mean."""
    populate(store, "20260101-000000-ab12", "20260102-000000-ab34", "20260103-000000-cd56")
    with pytest.raises(StateError) as err:
        store.resolve("ab")
    assert "matches 2 runs" in str(err.value)
    assert "20260101-000000-ab12" in str(err.value)
    assert "20260102-000000-ab34" in str(err.value)


def test_resolve_nothing_or_empty(store: Store) -> None:
    """No match and an empty reference are errors, not the latest run."""
    populate(store, "20260101-000000-ab12")
    with pytest.raises(StateError, match="no run matches 'ff'"):
        store.resolve("ff")
    with pytest.raises(StateError, match="empty run reference"):
        store.resolve("  ")


# --- artifacts ------------------------------------------------------------------------------


def test_artifact_round_trip(store: Store) -> None:
    """An artifact is written under artifacts/ and read back by its relative path."""
    run = make_run()
    d = store.create(run)
    rel = store.write_artifact(run.id, "judge-1.prompt.md", "rank A, B, C\n")
    assert rel == "artifacts/judge-1.prompt.md"
    assert (d / rel).read_text() == "rank A, B, C\n"
    assert store.read_artifact(run.id, rel) == "rank A, B, C\n"


def test_artifact_names_are_sanitized_and_stay_inside(store: Store) -> None:
    """Separators and odd characters become '_', and leading dots go, so nothing escapes."""
    run = make_run()
    d = store.create(run)
    assert store.write_artifact(run.id, "../../run.json", "x") == "artifacts/_.._run.json"
    assert store.write_artifact(run.id, "/etc/passwd", "x") == "artifacts/_etc_passwd"
    assert store.write_artifact(run.id, "..hidden", "x") == "artifacts/hidden"
    assert store.write_artifact(run.id, "reply: B ✓.md", "x") == "artifacts/reply__B__.md"
    assert store.load(run.id) == run
    assert all(p.parent == d / "artifacts" for p in (d / "artifacts").iterdir())


def test_artifact_name_with_nothing_usable_is_refused(store: Store) -> None:
    """'..' and '' cannot name a file inside artifacts/."""
    run = make_run()
    store.create(run)
    for bad in ("..", ".", ""):
        with pytest.raises(StateError, match="no usable characters"):
            store.write_artifact(run.id, bad, "x")


def test_artifact_overwrite_is_whole(store: Store) -> None:
    """Writing the same name again replaces it, leaving no temp file."""
    run = make_run()
    d = store.create(run)
    store.write_artifact(run.id, "a.md", "first")
    store.write_artifact(run.id, "a.md", "second")
    assert [p.name for p in (d / "artifacts").iterdir()] == ["a.md"]
    assert store.read_artifact(run.id, "artifacts/a.md") == "second"


def test_read_artifact_only_reads_artifacts(store: Store) -> None:
    """Paths write_artifact could not have returned are refused."""
    run = make_run()
    store.create(run)
    for bad in ("run.json", "artifacts/../run.json", "/etc/passwd", "artifacts/", "artifacts/.x"):
        with pytest.raises(StateError, match="not an artifact path"):
            store.read_artifact(run.id, bad)
    with pytest.raises(StateError, match="no such artifact"):
        store.read_artifact(run.id, "artifacts/missing.md")


def test_write_artifact_needs_an_existing_run(store: Store) -> None:
    """Artifacts belong to a run that exists."""
    with pytest.raises(StateError, match="no run"):
        store.write_artifact("20260101-000000-0000", "a.md", "x")
