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


@pytest.mark.parametrize(
    ("body", "issue"),
    [
        ("x\n<!-- magi:pr issue=12 run=r -->", 12),
        ("Closes #7", 7),
        ("this fixes #8 for good", 8),
        ("Resolved #9", 9),
        ("see #10", None),
        (None, None),
    ],
)
def test_issue_of_pull(body: str | None, issue: int | None) -> None:
    """A magi PR names its issue by marker, or by GitHub's closing keywords."""
    assert markers.issue_of_pull(body) == issue
