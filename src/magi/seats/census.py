"""The run's process census in its record: who is alive now, ended at each turn and resume.

``RecordingToken`` is the run's cancel token that also writes each process it is handed
(pid, group, session, start time, seat and turn, read from the process itself) into
``Record.processes`` (saved at once) and takes it out when the process is done (saved with
the turn that follows). A jailed turn's process is not recorded: its pid namespace dies
with magi (``bwrap --unshare-pid --die-with-parent``), so nothing of it outlives a kill. So a
magi killed -9 leaves a record that names every agent it left running; ``end_leftovers``
is what a resume (and the end of every drive) runs first: it ends each recorded process
that is still the same process, and everything still carrying the run's marker.
"""

from __future__ import annotations

from magi.agents import census
from magi.agents.base import CancelToken
from magi.model.run import Process
from magi.seats.context import SeatContext


class RecordingToken(CancelToken):
    """A cancel token that keeps ``Record.processes`` equal to the processes it holds."""

    def __init__(self) -> None:
        super().__init__()
        self._sctx: SeatContext | None = None

    def attach(self, sctx: SeatContext) -> None:
        self._sctx = sctx

    def register(self, pgid: int, *, contained: bool = False) -> None:
        super().register(pgid, contained=contained)
        sctx = self._sctx
        if sctx is None or contained:
            # A jailed turn (bwrap --unshare-pid --die-with-parent): if magi is killed, the
            # kernel ends the jail and everything in it, so no resume has it to end and the
            # record is not rewritten before every turn only to say so.
            return
        info = census.stat(pgid)
        env = census.environ(pgid)
        turn = env.get("MAGI_TURN", "0")
        proc = Process(
            pid=pgid,
            pgid=info.pgid if info else pgid,
            sid=info.sid if info else pgid,
            start=info.start if info else None,
            seat=env.get("MAGI_SEAT", ""),
            turn=int(turn) if turn.isdigit() else 0,
        )
        with sctx.lock:
            sctx.record.processes = [*sctx.record.processes, proc]
            sctx.save()

    def unregister(self, pgid: int) -> None:
        super().unregister(pgid)
        sctx = self._sctx
        if sctx is None:
            return
        # Not saved on its own: the turn's record is saved next, and a kill before that
        # leaves a process the resume finds dead (its start time no longer matches).
        with sctx.lock:
            sctx.record.processes = [p for p in sctx.record.processes if p.pid != pgid]


def end_leftovers(sctx: SeatContext) -> list[int]:
    """End what a previous magi of this run left alive; clear the list. Returns the pids."""
    rec = sctx.record
    found = [
        census.Found(pid=p.pid, pgid=p.pgid, sid=p.sid, ppid=0, start=p.start or 0)
        for p in rec.processes
        if census.alive(p.pid, p.start)
    ]
    from magi.seats.asking import close_open

    if closed := close_open(sctx):
        sctx.event("run", f"question(s) {', '.join(closed)} left open by an ended turn: unanswered")
        sctx.save()
    marked = census.marked(rec.id, run_dir=str(sctx.run_dir))
    found += [f for f in marked if f.pid not in {x.pid for x in found}]
    ended = census.end(found)
    if rec.processes or ended:
        with sctx.lock:
            rec.processes = []
            sctx.save()
    if ended:
        sctx.event(
            "run",
            f"ended {len(ended)} process(es) of this run still alive from before: "
            + ", ".join(map(str, sorted(ended))),
            "warn",
        )
    return ended


def end_turn(
    sctx: SeatContext, seat: str, turn: int, since: int = 0, *, jailed: bool = False
) -> list[int]:
    """At the end of a turn (begun at ``since`` ticks): its escaped descendants are ended.

    A jailed turn has none to find: it ran in a pid namespace of its own (``bwrap
    --unshare-pid``), and when the namespace's first process exits the kernel kills every
    other one in it, ``setsid`` or not. The /proc scan (every process's environment, once
    per turn) is for unjailed turns.
    """
    if jailed:
        return []
    ended = census.sweep_turn(sctx.record.id, seat, turn, run_dir=str(sctx.run_dir), since=since)
    if ended:
        sctx.event(
            "run",
            f"{seat}: ended {len(ended)} process(es) that outlived the turn outside its "
            "process group",
            "warn",
        )
    return ended
