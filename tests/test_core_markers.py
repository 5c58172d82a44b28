"""Hidden markers round-trip through comment bodies."""

from __future__ import annotations

import pytest

from magi.core import markers


def test_marker_round_trips_and_find_filters_on_fields() -> None:
    """What a marker writes, read gives back; find matches on fields."""
    a = "ack\n" + markers.marker(markers.RUN, run="20260101-000000-ab12", issue=7)
    b = markers.marker(markers.RUN, run="x", issue=8)
    assert markers.read(a) == [("run", {"run": "20260101-000000-ab12", "issue": "7"})]
    assert markers.find([a, b], markers.RUN, issue="8") == [{"run": "x", "issue": "8"}]
    assert markers.latest([a, b], markers.RUN) == {"run": "x", "issue": "8"}
    assert markers.latest([a], markers.GATE) is None


def test_marker_refuses_values_that_would_not_read_back() -> None:
    """A value with spaces or '>' could end the comment early; it is refused."""
    with pytest.raises(ValueError, match="refuse"):
        markers.marker(markers.RUN, run="a b")
    with pytest.raises(ValueError, match="refuse"):
        markers.marker(markers.RUN, run="-->")
