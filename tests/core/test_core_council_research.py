"""Research mode: clusters, who judges a solo finding, and seed 001's classification table."""

from __future__ import annotations

import pytest

from magi.core.council.research import classify_solo, clusters, judges_of


@pytest.mark.parametrize(
    ("verdicts", "outcome"),
    [
        (["agree", "agree"], "adopted"),
        (["agree", "conditional"], "conditional"),
        (["conditional", "conditional"], "conditional"),
        (["reject", "reject"], "rejected"),
        (["agree", "reject"], "conditional"),
        (["conditional", "reject"], "conditional"),
        (["agree"], "adopted"),
        (["conditional"], "conditional"),
        (["reject"], "rejected"),
        ([], "unverified"),
    ],
)
def test_the_classification_table(verdicts, outcome):
    """Each row of seed 001's table, and the single-verdict rows of a two-seat council."""
    assert classify_solo(verdicts)[0] == outcome


def test_a_split_is_noted():
    """agree + reject is conditionally adopted with a note that the council split."""
    assert "split" in classify_solo(["agree", "reject"])[1]


def test_unknown_verdicts_are_refused():
    """Only agree, conditional and reject are verdicts."""
    with pytest.raises(ValueError, match="unknown verdicts"):
        classify_solo(["maybe"])


def test_supporters_are_distinct_seats():
    """One seat saying a thing twice is one supporter: still a solo finding."""
    owner = {"F1": "sage-1", "F2": "sage-1", "F3": "sage-2", "F4": "sage-3"}
    found = clusters([["F1", "F2"], ["F3", "F4"]], owner, ["sage-1", "sage-2", "sage-3"])
    assert found[0].solo
    assert found[0].supporters == ("sage-1",)
    assert not found[1].solo


def test_a_seat_never_judges_its_own_finding():
    """The judges of a solo finding are every answering seat but its author."""
    owner = {"F1": "sage-2"}
    (cl,) = clusters([["F1"]], owner, ["sage-1", "sage-2", "sage-3"])
    assert judges_of(cl, ["sage-1", "sage-2", "sage-3"]) == ["sage-1", "sage-3"]
