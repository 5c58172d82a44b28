"""The competition's turn guard: refs, recorded heads and the user's checkout, around each turn.

Before the first seat turn of a node (a wave) it snapshots every ref and the user's main
checkout; after every turn that could reach the repository's git directory (unjailed, or a
jail that binds any of it writable: a candidate's clone shares only its objects, read-only,
and a judge's or reviewer's tree reads the shared git directory read-only) it

* restores each ref the turn changed, except the candidate branches (implementers commit
  there; their recorded heads are checked below instead);
* puts every candidate branch whose head is recorded back on that head (a judge with
  ``MAGI_ALLOW_WRITE=0`` moved every branch during the vote to a commit nobody judged);
* once no other seat's turn is running (the end of a wave: one ``git status`` of the user's
  checkout per wave, not per turn), compares the user's checkout with the snapshot and
  reports any change loudly against every seat that worked since the last look, never
  reverting it (the user may be working there), then takes the new state as the baseline.
  Only unjailed turns are looked after: the jail hides the checkout and binds the
  repository's index read-only, so a jailed seat cannot change what the look compares.

What it found is appended to the seat's ``violations`` and logged as a warning (an error,
for the user's checkout). ``pin_heads`` is the same head check on its own, for tally, fold
and a merge.
"""

from __future__ import annotations

import json

from magi.core.seats.jail import JailSpec, writes_under
from magi.git import refs_guard
from magi.git.checkout import MainStatus
from magi.graph.context import Context
from magi.model.run import Candidate
from magi.seats import RETRYABLE, SeatContext
from magi.seats.jailing import decision


def _heads(ctx: Context, *, skip: str | None = None) -> dict[str, str]:
    """Recorded heads of the candidates whose implement turn is over."""
    return {
        c.branch: c.head
        for c in ctx.run.candidates
        if c.head and c.status not in RETRYABLE and c.seat != skip
    }


def _winner(ctx: Context) -> Candidate | None:
    t = ctx.run.tally
    return ctx.run.candidate(t.winner) if t is not None and t.winner else None


def alongside(ctx: Context, seat: str) -> list[str]:
    """The other seats whose turn is running now (their ``after`` has not come yet)."""
    live = ctx.cache.get("guard.live")
    return sorted(s for s in live if s != seat) if isinstance(live, set) else []


def qualify(found: list[str], others: list[str]) -> list[str]:
    """Seats work in parallel: a change found as this turn ends may be another live seat's
    doing. Say so rather than accuse one seat."""
    if not found or not others:
        return found
    return [f"{v} (while {', '.join(others)} also worked)" for v in found]


class CompetitionGuard:
    """``magi.seats.TurnGuard`` for a ``Context``; snapshots live in ``ctx.cache``."""

    def before(self, sctx: SeatContext, seat: str, node: str, *, jail: JailSpec | None) -> None:
        ctx = _competition(sctx)
        jailed = jail is not None
        # A jail that leaves nothing of the repository's git directory writable leaves the
        # turn no way to change a ref: nothing to read back after it (a for-each-ref a turn).
        reach = jail is None or writes_under(jail, str(ctx.git.common_dir().resolve()))
        with ctx.lock:
            ctx.cache.setdefault("guard.live", set())
            live = ctx.cache["guard.live"]
            assert isinstance(live, set)  # noqa: S101 - set just above
            live.add(seat)
            worked = ctx.cache.setdefault("guard.worked", [])
            assert isinstance(worked, list)  # noqa: S101 - set just above
            if seat not in worked:
                worked.append(seat)
            shut = ctx.cache.setdefault("guard.shut", set())
            assert isinstance(shut, set)  # noqa: S101 - set just above
            if ctx.cache.get("guard.node") != node:
                # Every node opens a window of its own, whether or not its turns can reach
                # the refs: what moved between two nodes (you, magi) is no turn's doing.
                ctx.cache["guard.node"] = node
                ctx.cache.pop("guard.refs", None)
            if not reach:
                shut.add(seat)
            else:
                shut.discard(seat)
                if ctx.cache.get("guard.refs") is None:
                    ctx.cache["guard.refs"] = refs_guard.take(ctx.git)
            if not ctx.cache.get("guard.left"):
                # Once per process, before its first seat starts, jailed or not: what a wave
                # a kill cut short left is settled now, so nothing of this process is blamed.
                ctx.cache["guard.left"] = True
                _settle_left(ctx)
            if not jailed:
                main = ctx.cache.get("guard.main")
                if not isinstance(main, MainStatus):
                    main = MainStatus.take(ctx.git)
                    ctx.cache["guard.main"] = main
                ctx.cache["guard.look"] = True  # the checkout is looked at when the wave ends
                _keep(ctx, main, node, [s for s in worked if isinstance(s, str)])

    def after(self, sctx: SeatContext, seat: str, node: str) -> list[str]:
        ctx = _competition(sctx)
        with ctx.lock:
            live = ctx.cache.get("guard.live")
            others: list[str] = []
            if isinstance(live, set):
                live.discard(seat)
                others = sorted(live)
            shut = ctx.cache.get("guard.shut")
            if isinstance(shut, set) and seat in shut:
                shut.discard(seat)
                snap = None  # it could change no ref: none is read (``before``)
            else:
                snap = ctx.cache.get("guard.refs")
            found: list[str] = []
            if isinstance(snap, refs_guard.RefSnapshot):
                own = {f"refs/heads/{c.branch}" for c in ctx.run.candidates}
                found, refs = refs_guard.restore_reading(ctx.git, snap, allowed=own)
                # The fixer commits on the winner's branch after the tally: that head moves.
                winner = _winner(ctx)
                # Only the fix turn may move the winner's branch; fix records the new head.
                skip = winner.seat if winner is not None and node == "fix" else None
                moved = refs_guard.pin(ctx.git, _heads(ctx, skip=skip), now=refs)
                found += [f"candidate {m}" for m in moved]
                found = qualify(found, others)
            if found:
                rec = ctx.run.seats.get(seat)
                if rec is not None:
                    rec.violations = [*rec.violations, *found]
                ctx.save()
            main = ctx.cache.get("guard.main")
            changed: list[str] = []
            suspects: list[str] = []
            if not others:  # the wave's last turn ended
                worked = ctx.cache.pop("guard.worked", [seat])
                if isinstance(main, MainStatus) and ctx.cache.pop("guard.look", False):
                    now = MainStatus.take(ctx.git)
                    changed = main.changes(now)
                    ctx.cache["guard.main"] = now
                    (ctx.run_dir / BASELINE).unlink(missing_ok=True)
                    suspects = list(worked) if isinstance(worked, list) else [seat]
        if found:
            ctx.event(node, f"{seat}: refs changed and restored: " + "; ".join(found), "warn")
        if changed:
            line = "; ".join(changed)
            during = (
                f"{suspects[0]}'s turn"
                if len(suspects) == 1
                else "the turns of " + ", ".join(suspects)
            )
            _say_changed(ctx, node, f"during {during}", line, suspects, hedge="")
        return found + changed


# The user's checkout as the wave began, on disk while a wave is out: a kill mid-wave (the
# cache dies with the process) must not let the resume take what a seat did as the baseline.
BASELINE = "guard-checkout.json"


def _say_changed(
    ctx: Context, node: str, when: str, line: str, suspects: list[str], *, hedge: str
) -> None:
    """The user's checkout changed: said loudly, and on each suspect seat's record."""
    ctx.event(
        node,
        f"YOUR CHECKOUT {ctx.git.root} CHANGED {when} (left as it is, check it): {line}",
        "error",
    )
    with ctx.lock:
        for who in suspects:
            rec = ctx.run.seats.get(who)
            if rec is not None:
                also = [s for s in suspects if s != who]
                why = f"the user's checkout changed: {line}"
                if also:
                    why += f" (while {', '.join(also)} also worked)"
                rec.violations = [*rec.violations, why + hedge]
        ctx.save()


def _keep(ctx: Context, main: MainStatus, node: str, seats: list[str]) -> None:
    path = ctx.run_dir / BASELINE
    spare = path.with_suffix(".tmp")
    data = {"head": main.head, "entries": sorted(main.entries), "node": node, "seats": seats}
    spare.write_text(json.dumps(data))
    spare.replace(path)


def _settle_left(ctx: Context) -> None:
    """The baseline a wave a kill cut short left, compared with the checkout now, before
    any seat of this process starts, then dropped. What changed was done by a seat working
    then or by the user while the run was stopped (a resume may come days later): both are
    said, and the seats' records carry the doubt with the charge."""
    path = ctx.run_dir / BASELINE
    try:
        data = json.loads(path.read_text())
        left = MainStatus(head=str(data["head"]), entries=frozenset(map(str, data["entries"])))
        node = str(data.get("node") or "a node")
        seats = [str(s) for s in data.get("seats") or []]
    except FileNotFoundError:
        return
    except (OSError, ValueError, KeyError, TypeError) as e:
        ctx.event("guard", f"{path}: unreadable ({e}); dropped, nothing compared with it", "warn")
        path.unlink(missing_ok=True)
        return
    changed = left.changes(MainStatus.take(ctx.git))
    path.unlink(missing_ok=True)
    if changed:
        working = ", ".join(seats) or "its seats"
        _say_changed(
            ctx,
            node,
            f"since the run was stopped mid-wave at {node} (by {working}, working then, or "
            "by you while it was stopped)",
            "; ".join(changed),
            seats,
            hedge=" (before the run was stopped: it may have been you while it was stopped)",
        )


def after_checks(ctx: Context, node: str, what: str) -> None:
    """Check commands ran candidate code unjailed (verify.e2e, verify.gate): whatever they
    did to the user's checkout is said now, as theirs, and the next wave's baseline is taken
    after them. Unsaid, the next wave's look charged it to the seats of that wave (a judge
    accused of a file a candidate's test wrote). Jailed, a check cannot reach the checkout."""
    if decision(ctx).jailed:
        return
    with ctx.lock:
        main = ctx.cache.get("guard.main")
    if not isinstance(main, MainStatus):
        return  # no wave looked yet: the next one takes its baseline after these checks
    now = MainStatus.take(ctx.git)
    with ctx.lock:
        ctx.cache["guard.main"] = now
    changed = main.changes(now)
    if changed:
        _say_changed(
            ctx, node, f"while {what} ran candidate code unjailed", "; ".join(changed), [], hedge=""
        )


def pin_heads(ctx: Context, node: str, *, fix: bool = True) -> list[str]:
    """Every candidate branch at its recorded head (before tally, fold, merge); what moved."""
    moved = refs_guard.pin(ctx.git, _heads(ctx), fix=fix)
    if moved:
        ctx.event(
            node, "candidate branches moved since they were recorded: " + "; ".join(moved), "warn"
        )
    return moved


def _competition(sctx: SeatContext) -> Context:
    if not isinstance(sctx, Context):
        raise TypeError("the competition guard needs a competition context")
    return sctx
