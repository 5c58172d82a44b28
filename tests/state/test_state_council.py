"""The council record: same store, same schema discipline, its own kind."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from council_helpers import run
from magi.errors import StateError
from magi.model.run import RECORD_KINDS, Record
from magi.state.council import CouncilRun, load_council
from magi.state.store import Store

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "tests" / "snapshots" / "council.schema.json"
FIXTURE = ROOT / "tests" / "fixtures" / "state" / "council-schema2.json"  # frozen: never regenerate


def _refs(node: object) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"].rsplit("/", 1)[-1]} if "$ref" in node else set()
        return found.union(*(_refs(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_refs(v) for v in node))
    return set()


def render() -> str:
    """The council's own fields and the types they use; the Record fields (the config among
    them) are pinned by run.schema.json, so another table's new key does not trip this."""
    schema = CouncilRun.model_json_schema(by_alias=True)
    base = {f.alias or name for name, f in Record.model_fields.items()} | set(Record.model_fields)
    own = {k: v for k, v in schema["properties"].items() if k not in base}
    defs, todo = {}, _refs(own)
    while todo:
        name = todo.pop()
        defs[name] = schema["$defs"][name]
        todo |= _refs(defs[name]) - set(defs)
    pinned = {"properties": own, "$defs": defs}
    return json.dumps(pinned, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_council_model_matches_the_committed_snapshot():
    """No field of a council record changes without the snapshot changing in the same diff."""
    if SNAPSHOT.read_text(encoding="utf-8") != render():
        pytest.fail(
            "CouncilRun no longer matches tests/snapshots/council.schema.json: bump SCHEMA with "
            "a migration if a field changed meaning, then regenerate the snapshot",
            pytrace=False,
        )


def test_the_kind_is_registered():
    """Store.load knows council records."""
    assert RECORD_KINDS["council"] is CouncilRun


def test_a_council_round_trips_through_the_store(tmp_path):
    """Created, saved and loaded as a council; load_run refuses it by name."""
    store = Store(tmp_path)
    rec, _ = run({"sage-1": "says:A", "sage-2": "says:A", "sage-3": "says:B"})
    store.create(rec)
    loaded = store.load(rec.id)
    assert isinstance(loaded, CouncilRun)
    assert loaded == rec
    with pytest.raises(StateError, match="is a council, not a competition"):
        store.load_run(rec.id)


def test_the_frozen_record_of_this_schema_still_loads(tmp_path):
    """A council record written by schema 2 still reads back whole (through any migration)."""
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    d = tmp_path / "runs" / data["id"]
    d.mkdir(parents=True)
    shutil.copy(FIXTURE, d / "run.json")
    rec = load_council(Store(tmp_path), data["id"])
    assert rec.verdict == "passed"
    assert rec.position == "TOML"
    assert [r.kind for r in rec.redactions] == ["email"]


def test_load_council_refuses_a_competition(tmp_path):
    """A competition record is not read as a council."""
    from magi.model.run import Run, Task

    store = Store(tmp_path)
    comp = Run(
        id="20261201-080000-0001",
        created_at=rec_time(),
        repo="r",
        base="main",
        seed=1,
        task=Task(original="t", cleaned="t"),
    )
    store.create(comp)
    with pytest.raises(StateError, match="not a council"):
        load_council(store, comp.id)


def rec_time():
    from datetime import UTC, datetime

    return datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
