"""The process census: find every process of a run or a turn, wherever it went, and end it.

Each turn's process starts in a session and group of its own, and magi kills that group
when the turn ends. Two things escape that: a descendant that called ``setsid`` (a group
and session of its own), and every agent of a magi that was killed -9 (nothing is left to
kill their groups). Both are found here by what they carry rather than where they sit:

* **environment marker** (Linux ``/proc``): every agent process gets ``MAGI_RUN``,
  ``MAGI_SEAT`` and ``MAGI_TURN``; children inherit them through ``setsid`` and
  double forks, so ``/proc/*/environ`` names the run and turn of each. A resume ends what
  still carries its run's marker before any seat starts.
* **child subreaper** (Linux ``prctl(PR_SET_CHILD_SUBREAPER)``): orphans are re-parented
  to magi instead of init, so one that also dropped its environment (``env -i``) is still
  found, as a child of magi in a session that is not magi's, and ended when no turn is live.

Elsewhere (macOS) only the process groups work; ``method()`` says which is in force, and
doctor prints it. Each recorded process carries its start time, so a pid reused by an
unrelated process after a reboot or wrap-around is never killed.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

_PROC = Path("/proc")
_PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
_subreaper = False

# The children magi waits for itself (``agents.process.run``): from before the fork until
# they are reaped. A child between its fork and its exec already sits in a session of its
# own but still carries magi's environment, not the run's marker; one that has exited is a
# zombie whose environment reads empty. Either looks like an unmarked orphan to the
# sweep, and ending (and reaping) it loses a seat's turn or its exit status, so the sweep
# leaves orphans alone while magi has a child of its own starting or unreaped.
_ours: set[int] = set()
_starting = 0
_ours_lock = threading.Lock()


@dataclass(frozen=True)
class Found:
    """One live process: pid, group, session and its start time (clock ticks since boot)."""

    pid: int
    pgid: int
    sid: int
    ppid: int
    start: int


def available() -> bool:
    return sys.platform.startswith("linux") and (_PROC / "self" / "environ").exists()


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux); True on success."""
    global _subreaper
    if _subreaper:
        return True
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    _subreaper = bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    return _subreaper


def method() -> str:
    """What finds a turn's escaped descendants on this machine, in a sentence."""
    if not available():
        return "process groups only (no /proc: a descendant that calls setsid can escape)"
    # A run makes itself the subreaper at start wherever /proc exists (Linux).
    return "process groups, the MAGI_RUN/MAGI_TURN marker in /proc, and a child subreaper"


def stat(pid: int) -> Found | None:
    """The process ``pid`` as /proc has it; None if gone, a zombie, or unreadable."""
    try:
        raw = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may contain anything: split after it.
    fields = raw[raw.rindex(")") + 2 :].split()
    if fields[0] in ("Z", "X"):
        return None
    ppid, pgid, sid, start = int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19])
    return Found(pid=pid, pgid=pgid, sid=sid, ppid=ppid, start=start)


def environ(pid: int) -> dict[str, str]:
    try:
        raw = (_PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return {}
    out: dict[str, str] = {}
    for entry in raw.split(b"\0"):
        key, sep, value = entry.partition(b"=")
        if sep and key.startswith(b"MAGI_"):
            out[key.decode(errors="replace")] = value.decode(errors="replace")
    return out


def _pids() -> list[int]:
    try:
        names = os.listdir(_PROC)
    except OSError:
        return []
    me = os.getpid()
    return [int(n) for n in names if n.isdigit() and int(n) != me]


def marked(
    run_id: str, seat: str | None = None, turn: int | None = None, *, run_dir: str = ""
) -> list[Found]:
    """Live processes carrying the marker of ``run_id`` (and of that seat and turn, if given).

    Run ids are unique within a store, not across stores: ``run_dir`` (the run's directory)
    must also prefix the process's MAGI_PROMPT_FILE, so another store's run is never hit.
    """
    if not available() or not run_id:
        return []
    found: list[Found] = []
    for pid in _pids():
        env = environ(pid)
        if env.get("MAGI_RUN") != run_id:
            continue
        if run_dir and not env.get("MAGI_PROMPT_FILE", "").startswith(run_dir.rstrip("/") + "/"):
            continue
        if seat is not None and env.get("MAGI_SEAT") != seat:
            continue
        if turn is not None and env.get("MAGI_TURN") != str(turn):
            continue
        if (info := stat(pid)) is not None:
            found.append(info)
    return found


def now_ticks() -> int:
    """Clock ticks since boot, the unit of a process's start time in /proc; 0 without /proc."""
    try:
        uptime = float((_PROC / "uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0
    return int(uptime * os.sysconf("SC_CLK_TCK"))


@contextlib.contextmanager
def starting() -> Iterator[Callable[[int], None]]:
    """Around the start of a child magi will wait for: yields ``own``, to be called with its
    pid before the block ends; ``reaped(pid)`` once it has been waited for."""
    global _starting
    with _ours_lock:
        _starting += 1

    def own(pid: int) -> None:
        with _ours_lock:
            _ours.add(pid)

    try:
        yield own
    finally:
        with _ours_lock:
            _starting -= 1


def reaped(pid: int) -> None:
    with _ours_lock:
        _ours.discard(pid)


def _quiet() -> bool:
    """No child of magi's own is starting or unreaped."""
    with _ours_lock:
        return _starting == 0 and not _ours


def orphans(since: int = 0) -> list[Found]:
    """Children re-parented to this (subreaper) process, outside its session and unmarked,
    started at or after ``since`` (a child magi started itself before the turn is not one);
    none while a child of magi's own is starting or unreaped (``_ours``), asked after the
    listing: a child listed between its fork and its registration is then still starting."""
    if not (available() and _subreaper):
        return []
    me, my_sid = os.getpid(), os.getsid(0)
    out = []
    for pid in _pids():
        info = stat(pid)
        if info is None or info.ppid != me or info.sid == my_sid or info.start < since:
            continue
        if "MAGI_RUN" not in environ(info.pid):
            out.append(info)
    return out if _quiet() else []


def _children() -> list[int] | None:
    """This process's children, from each thread's ``children`` list (far cheaper than a
    scan of /proc, and orphans re-parented to a subreaper are listed there); None where the
    kernel has no such list (CONFIG_PROC_CHILDREN)."""
    tasks = _PROC / "self" / "task"
    try:
        tids = os.listdir(tasks)
    except OSError:
        return None
    out: list[int] = []
    for tid in tids:
        try:
            out += [int(p) for p in (tasks / tid / "children").read_text().split()]
        except FileNotFoundError:
            if not (tasks / tid).exists():
                continue  # the thread ended meanwhile
            return None
        except OSError:
            continue
    return out


REAP_WAIT_S = 2.0  # how long a reap waits for killed processes to finish dying
_REAP_PAUSE_S = 0.01
# One reaper at a time: two threads must not both wait for one pid (the second could wait
# for whatever process is given that pid next).
_reaping = threading.Lock()


def _waited(pid: int) -> bool:
    """Reap ``pid`` if it has exited: True once reaped (or when it is not ours to wait for),
    False while it still runs."""
    try:
        got, _ = os.waitpid(pid, os.WNOHANG)
    except (ChildProcessError, OSError):
        return True  # not ours to wait for (any more)
    return got != 0


def _group_children(me: int, leader: int) -> list[int]:
    """Children of ours (alive or zombie) in the process group ``leader`` led, leader aside."""
    kids = _children()
    found = []
    for pid in _pids() if kids is None else kids:
        try:
            raw = (_PROC / str(pid) / "stat").read_text()
        except OSError:
            continue
        fields = raw[raw.rindex(")") + 2 :].split()
        if pid != leader and int(fields[1]) == me and int(fields[2]) == leader:
            found.append(pid)
    return found


def reap_group(
    leader: int,
    wait: float = REAP_WAIT_S,
    clock: Callable[[], float] = time.monotonic,
    pause: Callable[[float], None] = time.sleep,
) -> list[int]:
    """Wait for every child of ours in the process group ``leader`` led (its leader aside).

    A subreaper inherits what a turn's leader leaves behind when it exits first; bwrap's
    pid 1 in the turn's pid namespace is one, every jailed turn: without this it stays a
    zombie of magi's until magi exits. Call it after the group was killed and before the
    leader is reaped: while the leader is a zombie its pid, the group's id, cannot be
    reused, so nothing outside the turn is waited for. It lists again until a pass finds
    nobody (a grandchild is handed to magi only when its parent dies), and gives up after
    ``wait`` seconds on what will not die (a process stuck in the kernel on a dead mount, or
    one the kill could not reach): the turn ends anyway, as it did before.
    """
    if not (available() and _subreaper):
        return []
    me, reaped = os.getpid(), []
    deadline = clock() + wait
    with _reaping:
        while members := _group_children(me, leader):
            running = [pid for pid in members if not _waited(pid)]
            reaped += [pid for pid in members if pid not in running]
            if running and clock() >= deadline:
                break
            if running:
                pause(_REAP_PAUSE_S)
    return reaped


def alive(pid: int, start: int | None) -> bool:
    """``pid`` is running and is the same process that was recorded (same start time)."""
    info = stat(pid)
    return info is not None and (start is None or info.start == start)


def end(found: Collection[Found]) -> list[int]:
    """SIGKILL each process and its group (when it leads one); reap our own children."""
    killed: list[int] = []
    for f in found:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if f.pgid == f.pid:
                os.killpg(f.pid, signal.SIGKILL)
            os.kill(f.pid, signal.SIGKILL)
            killed.append(f.pid)
    me = os.getpid()
    ours = [f.pid for f in found if f.ppid == me]  # re-parented to us: zombies until reaped
    deadline = time.monotonic() + REAP_WAIT_S
    with _reaping:
        while ours := [pid for pid in ours if not _waited(pid)]:
            if time.monotonic() >= deadline:
                break  # what would not die (stuck in the kernel) is left, not waited for
            time.sleep(_REAP_PAUSE_S)
    return killed


def sweep_run(run_id: str, *, run_dir: str = "") -> list[int]:
    """End every live process of ``run_id`` (a resume, before any seat starts)."""
    return end(marked(run_id, run_dir=run_dir))


def sweep_turn(
    run_id: str, seat: str, turn: int, *, run_dir: str = "", since: int = 0
) -> list[int]:
    """At the end of a turn: its marked descendants, and unmarked orphans if no process of
    magi's own is live (``orphans``)."""
    found = marked(run_id, seat, turn, run_dir=run_dir)
    found += [o for o in orphans(since) if o.pid not in {f.pid for f in found}]
    return end(found)
