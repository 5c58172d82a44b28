"""A red job the machine failed, told from one the code failed: read from the jobs API's
facts and the runner's own lines of its log tail; never from what the code can print."""

from __future__ import annotations

import pytest

from magi.core.threads.infra import Ran, infra_failure

SHUTDOWN = (
    "2026-12-01T09:00:00.1Z Run pytest\n"
    "2026-12-01T09:04:00.1Z ##[error]The runner has received a shutdown signal. This can "
    "happen when the runner service is stopped, or a manually started runner is canceled.\n"
    "2026-12-01T09:04:00.2Z ##[error]The operation was canceled.\n"
)
LOST = Ran("r1", ("success", "cancelled"))  # a runner took it; no step failed
FAILED = Ran("r1", ("success", "failure"))  # a step failed: the code's


@pytest.mark.parametrize(
    ("log", "shown"),
    [
        (SHUTDOWN, "the runner received a shutdown signal"),
        (
            "##[error]The self-hosted runner: gpu-3 lost communication with the server. "
            "Verify the machine is running and has a healthy network connection.",
            "the runner lost communication with the server",
        ),
        ("##[error]The operation was canceled.\n", "the runner canceled the job"),
        (
            "##[error]Timed out while waiting for a runner to pick up this job",
            "no runner picked the job up in time",
        ),
    ],
)
def test_the_runners_error_lines_are_infrastructure_when_no_step_failed(log, shown):
    assert infra_failure("failure", log, LOST) == shown


@pytest.mark.parametrize(
    "log",
    [
        SHUTDOWN,
        # .NET's TaskCanceledException: exactly the runner's words, printed by a test
        "System.Threading.Tasks.TaskCanceledException: The operation was canceled.\n",
        "Error: The operation was canceled.\n",
        # a test filling the disk is the code's
        "##[error]System.IO.IOException: No space left on device : '/home/runner/x.log'",
    ],
)
def test_a_failed_step_or_a_tests_own_words_are_the_codes(log):
    assert infra_failure("failure", log, FAILED) is None
    if "##[error]" not in log:
        assert infra_failure("failure", log, LOST) is None  # not a runner line


def test_without_the_jobs_facts_a_log_proves_nothing():
    """``::error::`` renders as ``##[error]``: without the steps, the log is the code's."""
    assert infra_failure("failure", SHUTDOWN, None) is None


def test_a_job_no_runner_took_is_infrastructure():
    assert infra_failure("failure", None, Ran("")) == "no runner took the job"


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
    assert infra_failure("failure", log, LOST) is None


@pytest.mark.parametrize("conclusion", ["cancelled", "startup_failure", "stale"])
def test_a_job_stopped_or_never_started_is_infrastructure_without_a_log(conclusion):
    assert infra_failure(conclusion, None) == f"the job ended {conclusion}"


def test_a_timed_out_job_is_the_codes_unless_the_runner_says_otherwise():
    assert infra_failure("timed_out", "still running test_slow ...", LOST) is None
    assert infra_failure("timed_out", SHUTDOWN, LOST) is not None


def test_a_fail_fast_cancel_is_the_codes_even_with_a_cancelled_conclusion():
    log = '##[error]The job was canceled because "lint" failed.\n'
    assert infra_failure("cancelled", log) is None
