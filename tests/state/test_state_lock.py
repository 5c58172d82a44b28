"""The run lock: one process per run, freed by any exit, checked by every save."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from magi.errors import StateError
from magi.model.run import Run, Task
from magi.state import lock
from magi.state.store import Store

RUN_ID = "20261201-074500-00aa"

# A second process that takes the lock, says so on stdout, and waits for stdin to close.
HOLDER = """
import sys
from magi.state.store import Store
Store(sys.argv[1]).lock(sys.argv[2])
print("held", flush=True)
sys.stdin.read()
"""


def make_run() -> Run:
    return Run(
        id=RUN_ID,
        created_at=datetime(2026, 12, 1, 7, 45, tzinfo=UTC),
        repo="/src/x",
        base="main",
        seed=1,
        task=Task(original="t", cleaned="t"),
    )


@pytest.fixture
def created(tmp_path: Path) -> Store:
    store = Store(tmp_path / "home")
    store.create(make_run())
    store.unlock(RUN_ID)  # as if another process had created it and exited
    return store


@contextlib.contextmanager
def holder(store: Store) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the run until the block ends (or it is killed in it)."""
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(store.home), RUN_ID],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "held"  # the pipe says when it holds the lock
        yield proc


def test_a_second_process_is_refused_naming_the_holder(created: Store) -> None:
    """While another process holds the run, lock() and save() are refused with its pid."""
    with holder(created) as proc:
        with pytest.raises(lock.RunLockedError) as err:
            created.lock(RUN_ID)
        assert f"pid {proc.pid}" in err.value.message
        assert os.uname().nodename in err.value.message
        with pytest.raises(lock.RunLockedError):
            created.save(make_run())


def test_a_killed_holder_frees_the_run(created: Store) -> None:
    """kill -9 of the holder leaves a lock file but no lock: the next process takes it."""
    with holder(created) as proc:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert (created.run_dir(RUN_ID) / lock.LOCK).exists()
    created.lock(RUN_ID)
    created.save(make_run())
    assert lock.read_holder(created.run_dir(RUN_ID))["pid"] == os.getpid()


def test_the_same_process_may_take_its_own_run_again(created: Store) -> None:
    """Re-entrant in-process: a second Store of the same home does not refuse its own process."""
    created.lock(RUN_ID)
    Store(created.home).lock(RUN_ID)
    Store(created.home).save(make_run())


def test_a_save_after_the_lock_file_was_replaced_is_refused(created: Store) -> None:
    """The run directory recreated under a live run: this process no longer owns it."""
    created.save(make_run())
    d = created.run_dir(RUN_ID)
    saved = d.parent / "saved"
    shutil.copytree(d, saved)
    shutil.rmtree(d)
    saved.rename(d)
    with pytest.raises(StateError, match="replaced under this process"):
        created.save(make_run())


def test_agents_do_not_inherit_the_lock(created: Store) -> None:
    """A child process (an agent) that outlives magi must not keep the run locked."""
    created.lock(RUN_ID)
    with subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=-1):
        created.unlock(RUN_ID)
        with holder(created):  # would block forever on a lock inherited by the child
            pass
