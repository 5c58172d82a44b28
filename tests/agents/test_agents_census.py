"""The process census: descendants that escaped their group, and agents of a killed magi, end."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from graph_helpers import wait_for
from magi.agents import census
from magi.agents.process import run

pytestmark = pytest.mark.skipif(not census.available(), reason="needs /proc")

MARK = {"MAGI_RUN": "20261201-080000-beef", "MAGI_SEAT": "impl-A", "MAGI_TURN": "1"}

# Leaves a grandchild in a session of its own (setsid), which writes its pid and sleeps.
ESCAPE = (
    "python3 -c 'import os,sys,time\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    '    open(sys.argv[1], "w").write(str(os.getpid()))\n'
    "    os.closerange(0, 3)\n"
    "    time.sleep(600)\n"
    "' {pidfile}"
)


def _wait_pid(path: Path, proc: subprocess.Popen[bytes] | None = None) -> int:
    """The escaped process writes its pid before it sleeps (written whole by then: it closed)."""

    def written() -> bool:
        assert proc is None or proc.poll() is None, "the helper died"
        return path.exists() and bool(path.read_text())

    wait_for(written, f"the escaped process to write {path.name}")
    return int(path.read_text())


def _gone(pid: int) -> bool:
    return not census.alive(pid, None)


def _env(**extra: str) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], **MARK, **extra}


def test_a_descendant_that_called_setsid_survives_the_group_kill_and_the_sweep_ends_it(
    tmp_path: Path,
) -> None:
    """Group kill alone leaves it running; sweep_turn finds it by its marker and ends it."""
    pidfile = tmp_path / "pid"
    res = run(
        ["sh", "-c", ESCAPE.format(pidfile=pidfile)],
        cwd=tmp_path,
        stdin=None,
        env=_env(),
        timeout=60,
        output_max_bytes=1000,
    )
    assert res.exit_code == 0
    pid = _wait_pid(pidfile)
    try:
        assert not _gone(pid), "escaped its group: the old defence did not reach it"
        others = census.sweep_turn(MARK["MAGI_RUN"], "impl-B", 1)
        assert pid not in others, "another seat's sweep leaves it alone"
        assert pid in census.sweep_turn(MARK["MAGI_RUN"], "impl-A", 1)
        # SIGKILL was sent; the kernel takes a moment to tear it down
        wait_for(lambda: _gone(pid), "the swept process to be gone")
    finally:
        if not _gone(pid):
            os.kill(pid, signal.SIGKILL)


def test_agents_of_a_killed_magi_are_found_by_their_run_and_ended(tmp_path: Path) -> None:
    """The parent (magi) dies -9; sweep_run ends what still carries the run's marker."""
    pidfile = tmp_path / "pid"
    with subprocess.Popen(
        ["sh", "-c", ESCAPE.format(pidfile=pidfile) + "; exec sleep 600"],
        env=_env(),
        start_new_session=True,
    ) as parent:
        pid = _wait_pid(pidfile, parent)
        parent.kill()
        parent.wait()
        assert not _gone(pid)
        assert census.sweep_run("20261201-999999-0000") == []
        assert pid in census.sweep_run(MARK["MAGI_RUN"])
        wait_for(lambda: _gone(pid), "the swept process to be gone")


SUBREAPER = """
import json, os, sys
from magi.agents import census
from magi.agents.process import run
assert census.become_subreaper()
res = run(["sh", "-c", sys.argv[1]], cwd=None, stdin=None,
          env={"PATH": os.environ["PATH"]}, timeout=60, output_max_bytes=100)
while not (os.path.exists(sys.argv[2]) and open(sys.argv[2]).read()):
    pass  # the escaped process writes its pid before it sleeps
pid = int(open(sys.argv[2]).read())
alive_before = census.alive(pid, None)
killed = census.sweep_turn("r", "s", 1)
print(json.dumps({"pid": pid, "before": alive_before, "killed": killed,
                  "after": census.alive(pid, None)}))
"""


def test_an_unmarked_orphan_is_ended_through_the_subreaper(tmp_path: Path) -> None:
    """env -i drops the marker; re-parented to magi, it is still found when no turn is live."""
    pidfile = tmp_path / "pid"
    script = 'env -i PATH="$PATH" ' + ESCAPE.format(pidfile=pidfile)
    out = subprocess.run(
        [sys.executable, "-c", SUBREAPER, script, str(pidfile)],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    got = json.loads(out)
    assert got["before"] is True
    assert got["pid"] in got["killed"]
    assert got["after"] is False


# Another seat's turn ends at the worst instant of this one's process: the orphan sweep runs
# while the child is forked but not yet registered (it waits for its stdin, fed later).
RACE = """
import json, os, subprocess, sys
from magi.agents import census, process
assert census.become_subreaper()
swept = []
class Racing(subprocess.Popen):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        swept.extend(census.sweep_turn("r", "other-seat", 1))
process.subprocess.Popen = Racing
# No run marker: a verify check, or an agent caught before its exec.
res = process.run(["sh", "-c", "read x; exit 3"], cwd=None, stdin=b"go\\n",
                  env={"PATH": os.environ["PATH"]}, timeout=60, output_max_bytes=100)
print(json.dumps({"swept": swept, "exit": res.exit_code}))
"""


def test_another_seats_sweep_never_takes_a_starting_process_of_magis_for_an_orphan() -> None:
    """Between its fork and its registration a child sits in a session of its own and, until
    its exec, with magi's environment (no marker): it looked like an unmarked orphan, and a
    seat whose turn ended that instant killed it (another seat's turn lost: the flaky
    ``check script`` test in CI). magi's own children are known from before the fork until
    they are reaped, and the sweep leaves orphans for later while any is."""
    out = subprocess.run(
        [sys.executable, "-c", RACE],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert json.loads(out) == {"swept": [], "exit": 3}


def test_method_names_what_is_in_force() -> None:
    """doctor's line: the marker and the subreaper on Linux."""
    assert "marker" in census.method()


@pytest.mark.parametrize("listing", ["children", "scan"])
def test_what_a_turns_group_leaves_to_magi_is_reaped_before_its_leader(
    monkeypatch: pytest.MonkeyPatch, listing: str
) -> None:
    """The leader exits first; its child is re-parented to magi (the subreaper): killed
    with the group, it is waited for, not left a zombie. Both ways of finding magi's
    children: the threads' children lists, and a scan of /proc."""
    assert census.become_subreaper()
    if listing == "scan":
        monkeypatch.setattr(census, "_children", lambda: None)
    leader = subprocess.Popen(  # its child stays until killed: the group kill below
        ["sh", "-c", "sleep 600 & echo $!"], stdout=subprocess.PIPE, start_new_session=True
    )
    orphan = int(leader.stdout.readline())  # type: ignore[union-attr]
    os.waitid(os.P_PID, leader.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped yet
    info = census.stat(orphan)
    assert info is not None
    assert info.ppid == os.getpid()
    os.killpg(leader.pid, signal.SIGKILL)
    assert census.reap_group(leader.pid) == [orphan]
    assert not Path(f"/proc/{orphan}").exists()
    assert leader.wait() == 0
    leader.stdout.close()  # type: ignore[union-attr]


def test_a_grandchild_handed_to_magi_while_the_group_dies_is_reaped_too() -> None:
    """A child and its own child, both in the turn's group: the grandchild reaches magi
    only when its parent dies, after the first listing; the next pass waits for it."""
    assert census.become_subreaper()
    leader = subprocess.Popen(
        ["sh", "-c", "sh -c 'sleep 600 & echo $!; wait' & echo $!"],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    out = leader.stdout  # type: ignore[union-attr]
    pids = {int(out.readline()), int(out.readline())}
    os.waitid(os.P_PID, leader.pid, os.WEXITED | os.WNOWAIT)
    os.killpg(leader.pid, signal.SIGKILL)
    assert set(census.reap_group(leader.pid)) == pids
    assert not [p for p in pids if Path(f"/proc/{p}").exists()]
    leader.wait()
    out.close()


def test_a_process_that_will_not_die_is_left_after_the_wait_not_waited_for_forever() -> None:
    """One the kill did not reach (here: never killed) keeps running; the reap gives up at
    its deadline (a clock that moves on each look, no real waiting) and says it reaped none."""
    assert census.become_subreaper()
    leader = subprocess.Popen(
        ["sh", "-c", "sleep 600 & echo $!"], stdout=subprocess.PIPE, start_new_session=True
    )
    stays = int(leader.stdout.readline())  # type: ignore[union-attr]
    os.waitid(os.P_PID, leader.pid, os.WEXITED | os.WNOWAIT)
    ticks = iter(range(1000))
    pauses: list[float] = []
    try:
        got = census.reap_group(
            leader.pid, wait=3, clock=lambda: float(next(ticks)), pause=pauses.append
        )
        assert got == []
        assert census.stat(stays) is not None
        assert 1 <= len(pauses) <= 3
    finally:
        os.killpg(leader.pid, signal.SIGKILL)
        census.reap_group(leader.pid)
        leader.wait()
        leader.stdout.close()  # type: ignore[union-attr]


@pytest.mark.parametrize("contained", [False, True])
def test_a_turn_process_is_recorded_before_it_runs_unless_its_jail_dies_with_magi(contained):
    """The record names a live agent so a resume after kill -9 can end it; a jailed one
    (its own pid namespace, ended by the kernel with magi) is not saved for nothing."""
    import threading
    import types

    from magi.agents import process
    from magi.seats.census import RecordingToken

    seen: list[int] = []

    class Ctx:
        lock = threading.RLock()
        record = types.SimpleNamespace(processes=[])

        def save(self) -> None:
            seen.append(len(self.record.processes))

    token = RecordingToken()
    token.attach(Ctx())  # type: ignore[arg-type]
    res = process.run(
        ["sh", "-c", "exit 0"],
        cwd=None,
        stdin=None,
        env={"PATH": os.environ["PATH"]},
        timeout=30,
        output_max_bytes=1000,
        cancel=token,
        contained=contained,
    )
    assert res.exit_code == 0
    assert seen == ([] if contained else [1]), "saved with the process in it, before it ran"
