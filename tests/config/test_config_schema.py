"""The JSON Schema of a config file, and the package's public surface."""

from __future__ import annotations

from pathlib import Path

import magi.config
from magi.config.load import config_json_schema
from magi.config.merge import dotted, merge_layers, source_for


def test_schema_describes_a_config_file() -> None:
    """The schema names its dialect and title, forbids unknown keys and allows include."""
    schema = config_json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "magi config"
    assert schema["additionalProperties"] is False
    assert schema["properties"]["include"]["items"] == {"type": "string"}
    assert "graph" in schema["properties"]


def test_dunder_all_lists_what_exists() -> None:
    """Every name in __all__ is importable, and the loader's entry points are among them."""
    for name in magi.config.__all__:
        assert hasattr(magi.config, name), name
    assert {"load_config", "ResolvedConfig", "default_agents", "starter_config"} <= set(
        magi.config.__all__
    )


def test_dotted_quotes_keys_that_are_not_bare() -> None:
    """Key paths read like TOML: indices in brackets, odd keys quoted."""
    assert dotted(["agents", 2, "kind"]) == "agents[2].kind"
    assert dotted(["vars", "a.b"]) == 'vars."a.b"'


def test_a_replaced_value_stops_claiming_its_leaves() -> None:
    """When a higher layer replaces a table with a scalar, the old leaves' sources go."""
    low, high = Path("low.toml"), Path("high.toml")
    merged = merge_layers([(low, {"t": {"a": 1, "b": 2}}), (high, {"t": 3})])
    assert merged.data == {"t": 3}
    assert merged.sources == {"t": high}
    assert source_for(["t", "a"], merged.sources) == high
    assert merged.clashes == []
