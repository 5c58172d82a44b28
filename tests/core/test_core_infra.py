"""A red job the machine failed, told from one the code failed: read from its log tail."""

from __future__ import annotations

import pytest

from magi.core.threads.infra import infra_failure

SHUTDOWN = (
    "2026-12-01T09:00:00.1Z Run pytest\n"
    "2026-12-01T09:04:00.1Z ##[error]The runner has received a shutdown signal. This can "
    "happen when the runner service is stopped, or a manually started runner is canceled.\n"
    "2026-12-01T09:04:00.2Z ##[error]The operation was canceled.\n"
)


@pytest.mark.parametrize(
    ("log", "shown"),
    [
        (SHUTDOWN, "The runner has received a shutdown signal"),
        (
            "##[error]The self-hosted runner: gpu-3 lost communication with the server. "
            "Verify the machine is running and has a healthy network connection.",
            "lost communication with the server",
        ),
        ("Error: The operation was canceled.\n", "The operation was canceled"),
        (
            "The job was not acquired by Runner of type hosted even after multiple attempts",
            "not acquired",
        ),
        (
            "##[error]Timed out while waiting for a runner to pick up this job",
            "waiting for a runner",
        ),
        (
            "System.IO.IOException: No space left on device : '/home/runner/_diag/x.log'",
            "No space left",
        ),
    ],
)
def test_the_machines_words_are_infrastructure(log, shown):
    words = infra_failure("failure", log)
    assert words is not None
    assert shown in words
    assert "\n" not in words


@pytest.mark.parametrize(
    "log",
    [
        "FAILED tests/test_words.py::test_split - AssertionError\n"
        "##[error]Process completed with exit code 1.\n",
        # its own timeout-minutes: a test that hangs is the code's, though Actions cancels it
        "##[error]The job running on runner r1 has exceeded the maximum execution time of "
        "10 minutes.\n"
        "##[error]The operation was canceled.\n",
        # fail-fast: a sibling failed; that sibling's red check is the code's
        '##[error]The job was canceled because "test (3.12)" failed.\n'
        "##[error]The operation was canceled.\n",
        "",
    ],
)
def test_the_codes_failures_are_not(log):
    assert infra_failure("failure", log) is None


@pytest.mark.parametrize("conclusion", ["cancelled", "startup_failure", "stale"])
def test_a_job_stopped_or_never_started_is_infrastructure_without_a_log(conclusion):
    assert infra_failure(conclusion, None) == f"the job ended {conclusion}"


def test_a_timed_out_job_is_the_codes_unless_its_log_says_otherwise():
    assert infra_failure("timed_out", "still running test_slow ...") is None
    assert infra_failure("timed_out", SHUTDOWN) is not None


def test_a_fail_fast_cancel_is_the_codes_even_with_a_cancelled_conclusion():
    log = '##[error]The job was canceled because "lint" failed.\n'
    assert infra_failure("cancelled", log) is None
