"""The committed JSON-Schema snapshot of Run: any silent change to the record fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from magi.model.run import Run
from magi.state import snapshot

ROOT = Path(__file__).resolve().parents[2]


def test_run_model_matches_the_committed_snapshot() -> None:
    """The Run model is exactly what tests/snapshots/run.schema.json records."""
    problem = snapshot.check(ROOT)
    if problem:
        pytest.fail(problem, pytrace=False)


def test_snapshot_is_the_by_alias_schema_sorted() -> None:
    """The snapshot is model_json_schema(by_alias=True), keys sorted, with 'schema' not the name."""
    text = snapshot.render()
    assert json.loads(text) == Run.model_json_schema(by_alias=True)
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert "schema" in json.loads(text)["properties"]
    assert "schema_version" not in json.loads(text)["properties"]


def test_drift_is_reported_with_what_to_do(tmp_path: Path) -> None:
    """A changed model is caught, and the message says bump SCHEMA, migrate, regenerate."""
    path = snapshot.write(tmp_path)
    assert snapshot.check(tmp_path) is None
    schema = json.loads(path.read_text())
    schema["properties"]["gate_ran"] = {"type": "boolean"}
    path.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n")
    problem = snapshot.check(tmp_path)
    assert problem is not None
    assert "bump SCHEMA" in problem
    assert "add a migration" in problem
    assert "python -m magi.state.snapshot" in problem


def test_a_missing_snapshot_is_reported(tmp_path: Path) -> None:
    """No snapshot at all is a failure that says how to make one."""
    problem = snapshot.check(tmp_path)
    assert problem is not None
    assert "missing" in problem


def test_main_regenerates_and_checks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The command writes the snapshot under the given root, and --check exits 1 on drift."""
    (tmp_path / snapshot.SNAPSHOT).parent.mkdir(parents=True)
    (tmp_path / snapshot.SNAPSHOT).write_text("{}\n")
    assert snapshot.main(["--check", str(tmp_path)]) == 1
    assert "bump SCHEMA" in capsys.readouterr().err
    assert snapshot.main([str(tmp_path)]) == 0
    assert snapshot.main(["--check", str(tmp_path)]) == 0
    assert snapshot.main(["a", "b"]) == 2


def test_find_root_walks_up_to_pyproject(tmp_path: Path) -> None:
    """Run from anywhere inside the repo, the command finds the repo root."""
    assert snapshot.find_root(ROOT / "tests" / "fixtures") == ROOT
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert snapshot.find_root(tmp_path / "a" / "b") == tmp_path
