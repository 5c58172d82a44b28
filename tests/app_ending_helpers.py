"""Shared by several test modules (carried out of test_app_ending.py)."""

from __future__ import annotations

from github_helpers import REPO, SEAL, store_record, world
from magi.core.threads import markers
from magi.model.run import Run
from magi.testing.github import FakeGitHub
from record_helpers import run, text

RUN = "20260901-000000-0001"


REF = f"magi/runs/{RUN}"


PR = 7


SHA = "a" * 40


def scene(fake: FakeGitHub | None = None) -> FakeGitHub:
    fake = world(fake or FakeGitHub())
    body = "Closes #1\n" + SEAL.marker(markers.PR, issue=1, run=RUN)
    fake.add_pull(REPO, PR, f"magi/{RUN}/A", SHA, title="Fix spelling", body=body)
    store_record(
        fake, text(run(RUN)), RUN, files={"artifacts/judge-1.txt": "why A", "published.json": "p"}
    )
    return fake


def recorded(fake: FakeGitHub) -> Run:
    raw = fake.file_at(REPO, fake.world(REPO).refs[REF], "run.json")
    assert raw is not None
    r = Run.model_validate_json(raw)
    return r
