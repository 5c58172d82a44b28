"""publish's landing round adds to a run record it must read first: one it cannot read
is the Action's clear error naming the ref, never a raw traceback, and nothing moves."""

from __future__ import annotations

import pytest

from land_helpers import PR, commit, scene, sh
from magi.action.agents_job.land import LandRound
from magi.action.publish_job.land_publish import _record
from magi.errors import TamperedArtifact

RUN = "20261201-120000-abcd"
REF = f"refs/magi/runs/{RUN}"


@pytest.mark.parametrize(
    "run_json",
    [
        "{not json",  # JSONDecodeError
        '{"schema": 1}',  # a record missing what a run has
        '["a", "list"]',  # not an object at all
        '{"schema": 999, "id": "x"}',  # a schema this magi does not know
    ],
)
def test_an_unreadable_record_is_tampered_naming_the_ref(tmp_path, run_json):
    s = scene(tmp_path)
    sh(s.dev, "checkout", "-q", "--orphan", "record")
    sh(s.dev, "rm", "-rfq", "--cached", ".")
    commit(s.dev, "run.json", run_json, "a record")
    sh(s.dev, "push", "-q", "origin", f"record:{REF}")
    before = s.remote_sha(REF)
    done = LandRound.model_construct(pr=PR, run=RUN, round=1, head="0" * 40, changed=True)
    with pytest.raises(TamperedArtifact, match=REF) as err:
        _record(s.git, s.remote, done)
    assert err.value.__cause__ is None
    assert s.remote_sha(REF) == before


def test_a_record_without_run_json_is_tampered_too(tmp_path):
    s = scene(tmp_path)
    sh(s.dev, "checkout", "-q", "--orphan", "record")
    sh(s.dev, "rm", "-rfq", "--cached", ".")
    commit(s.dev, "other.txt", "x\n", "a record without run.json")
    sh(s.dev, "push", "-q", "origin", f"record:{REF}")
    done = LandRound.model_construct(pr=PR, run=RUN, round=1, head="0" * 40, changed=True)
    with pytest.raises(TamperedArtifact, match=REF):
        _record(s.git, s.remote, done)
