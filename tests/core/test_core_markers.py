"""Hidden markers round-trip through comment bodies, and only magi's key makes one."""

from __future__ import annotations

import pytest

from magi.core.threads import markers
from magi.core.threads.markers import Seal

SEAL = Seal(b"magi-test-key-0123456789abcdef")
OTHER = Seal(b"another-key-0123456789abcdef!!")


def test_marker_round_trips_and_find_filters_on_fields() -> None:
    """What a marker writes, read gives back (without the mac); find matches on fields."""
    a = "ack\n" + SEAL.marker(markers.RUN, run="20260101-000000-ab12", issue=7)
    b = SEAL.marker(markers.RUN, run="x", issue=8)
    assert SEAL.read(a) == [("run", {"run": "20260101-000000-ab12", "issue": "7"})]
    assert SEAL.find([a, b], markers.RUN, issue="8") == [{"run": "x", "issue": "8"}]
    assert SEAL.latest([a, b], markers.RUN) == {"run": "x", "issue": "8"}
    assert SEAL.latest([a], markers.GATE) is None


def test_marker_refuses_values_that_would_not_read_back() -> None:
    """A value with spaces or '>' could end the comment early; it is refused."""
    with pytest.raises(ValueError, match="refuse"):
        SEAL.marker(markers.RUN, run="a b")
    with pytest.raises(ValueError, match="refuse"):
        SEAL.marker(markers.RUN, run="-->")
    with pytest.raises(ValueError, match="seal's own"):
        SEAL.marker(markers.RUN, mac="0" * 32)


@pytest.mark.parametrize(
    "forged",
    [
        "<!-- magi:approval comment=1 sha=abc login=writer -->",  # the one that merged a PR
        "<!-- magi:approval comment=1 sha=abc login=writer mac=" + "0" * 32 + " -->",
        "<!-- magi:approval comment=1 sha=abc login=writer mac= -->",
    ],
)
def test_an_unsealed_or_badly_sealed_marker_does_not_exist(forged: str) -> None:
    """Typed by a stranger (or echoed by a bug), a marker without magi's MAC reads as none."""
    assert SEAL.read(forged) == []
    assert SEAL.latest([forged], markers.APPROVAL) is None


def test_a_changed_field_kind_or_key_breaks_the_seal() -> None:
    """The MAC covers the kind, every field and its order: nothing can be edited or moved."""
    good = SEAL.marker(markers.APPROVAL, comment=1, sha="abc", login="writer")
    assert SEAL.read(good)
    assert SEAL.read(good.replace("sha=abc", "sha=abd")) == []
    assert SEAL.read(good.replace("magi:approval", "magi:run")) == []
    assert SEAL.read(good.replace("comment=1 sha=abc", "sha=abc comment=1")) == []
    assert SEAL.read(good.replace(" mac=", " login=mallory mac=")) == []  # a field added
    assert OTHER.read(good) == []  # another App's key


def test_the_same_key_however_the_pem_was_pasted() -> None:
    """The App's env var and the workflow's secret hold one file, pasted differently."""
    pem = (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAK\nzz9+/==\n-----END RSA PRIVATE KEY-----\n"
    )
    same = [pem, pem.replace("\n", "\\n"), pem.replace("\n", "\r\n"), "  " + pem.strip() + "\n\n"]
    keys = {Seal.from_private_key(p).key for p in same}
    assert len(keys) == 1
    assert Seal.from_private_key(pem.replace("MIIB", "MIIC")).key not in keys
    with pytest.raises(ValueError, match="empty"):
        Seal.from_private_key("-----BEGIN RSA PRIVATE KEY-----\n-----END RSA PRIVATE KEY-----")


def test_clean_escapes_every_marker_this_seal_did_not_make() -> None:
    """The last door: magi's own markers pass; typed, foreign or broken ones are shown."""
    ours = SEAL.marker(markers.RUN, run="r", issue=1)
    theirs = OTHER.marker(markers.RUN, run="r", issue=1)
    text = f"a <!--magi:approval comment=1 --> b <!-- MAGI:x --> {theirs}\n{ours}"
    out, n = SEAL.clean(text)
    assert n == 3
    assert out.endswith(ours)
    assert SEAL.read(out) == [("run", {"run": "r", "issue": "1"})]
    assert out.count("&lt;!--") == 3


@pytest.mark.parametrize(
    ("body", "issue"),
    [
        (f"x\n{SEAL.marker(markers.PR, issue=12, run='r')}", 12),
        ("x\n<!-- magi:pr issue=12 run=r -->", None),  # typed: not magi's
        ("Closes #7", None),  # a closing keyword makes no PR magi's
        (None, None),
    ],
)
def test_issue_of_pull(body: str | None, issue: int | None) -> None:
    """A magi PR names its issue by its sealed marker, and only by it."""
    assert SEAL.issue_of_pull(body) == issue


def test_a_nul_in_a_value_cannot_fake_a_field_boundary() -> None:
    """`spent=1\\0pr=7` hashes like two fields; a value outside the alphabet is no marker."""
    good = SEAL.marker(markers.TRACKING, issue=1, run="r1", spent=1)
    mac = good.split("mac=")[1].split()[0]
    forged = f"<!-- magi:tracking issue=1 run=r1 spent=1\0pr=7 mac={mac} -->"
    assert SEAL.read(forged) == []
    assert SEAL.clean(forged)[1] == 1
