"""The tracking comment's jobs part: rendered, spliced in, carried over, never rolled back."""

from __future__ import annotations

from datetime import UTC, datetime

from github_helpers import SEAL
from magi.report.tracking import JobLine, carry_jobs, jobs_block, jobs_of, with_jobs

T0 = datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
MARK = SEAL.marker("tracking", issue=1, run="r1", spent=0)
PUBLISHED = f"### magi\n\nRun `r1`: **ready**\n\n- [x] compete (3s)\n\n{MARK}"


def block(run: int, *jobs: JobLine) -> str:
    return jobs_block(run, f"https://github.example/runs/{run}", list(jobs), SEAL)


def test_each_job_shows_its_state_its_time_and_its_log():
    """Done: conclusion, time and log; running: a live log; queued: no link yet."""
    text = block(
        5,
        JobLine("Read the issue", "completed", "success", "https://l/1", T0, T0.replace(second=9)),
        JobLine("Compete", "in_progress", None, "https://l/2", T0),
        JobLine("Publish", "queued", None, "https://l/3"),
        JobLine("Long", "completed", "failure", "https://l/4", T0, T0.replace(minute=3, second=5)),
    )
    assert "- [x] Read the issue: success, 9s · [log](https://l/1)" in text
    assert "- [ ] Compete: in progress · [live log](https://l/2)" in text
    assert "- [ ] Publish: queued\n" in text
    assert "- [x] Long: failure, 3m 05s · [log](https://l/4)" in text
    assert "[5](https://github.example/runs/5)" in text


def test_a_job_name_cannot_break_the_comment():
    """Names are inline text: no mention, no tag, no table pipe survives."""
    text = block(5, JobLine("@team <b>x</b> | y", "queued"))
    assert "@team" not in text
    assert "<b>" not in text
    assert "\\|" in text


def test_the_block_goes_before_the_marker_and_is_replaced_in_place():
    """First splice: before magi's marker (still last); the next one replaces it."""
    once = with_jobs(PUBLISHED, block(5, JobLine("Compete", "queued")))
    assert once.startswith(PUBLISHED.rsplit("\n", 1)[0])
    assert once.rstrip().endswith(MARK)
    twice = with_jobs(once, block(5, JobLine("Compete", "completed", "success")))
    assert twice.count("magi:jobs run=") == 1
    assert "Compete: success" in twice
    assert "Compete: queued" not in twice
    assert SEAL.latest([twice], "tracking") == SEAL.latest([PUBLISHED], "tracking")


def test_an_older_runs_block_never_replaces_a_newer_ones():
    """Run ids only grow: a late delivery of a retried run's predecessor changes nothing."""
    newer = with_jobs(PUBLISHED, block(9, JobLine("Compete", "in_progress")))
    assert with_jobs(newer, block(5, JobLine("Compete", "completed", "failure"))) == newer
    assert "Compete: failure" in with_jobs(
        newer, block(10, JobLine("Compete", "completed", "failure"))
    )


def test_a_publish_rewrite_keeps_the_apps_jobs():
    """carry_jobs: publish rewrites the run's part; the jobs part the App wrote stays."""
    old = with_jobs(PUBLISHED, block(5, JobLine("Compete", "completed", "success")))
    rewritten = PUBLISHED.replace("**ready**", "**blocked**")
    kept = carry_jobs(old, rewritten)
    assert "**blocked**" in kept
    assert jobs_of(kept) == jobs_of(old) != ""
    assert carry_jobs(PUBLISHED, rewritten) == rewritten  # nothing to carry
