"""``magi stats``: relative figures over stored runs, each saying how many runs it rests on.

These are a by-product, not a benchmark (seats rotate, tasks are whatever was asked). Every
figure is a ``Ratio``: the count, what it is out of, and the number of runs behind it, so a
100 % that rests on one run reads as exactly that.

* implementation: win rate per agent (wins / runs it implemented in, contested or not), the
  same by the CLI and version that wrote the candidate (``Seat.cli_version``), and
  how often it produced nothing (candidates with no change and no verified no-op claim);
* review: findings per round; precision per reviewer agent (adopted / submitted, adoption by
  any fixer of the run, round or ``magi fix``); unique-find rate (``core.review.loop.same_find``);
  the share of its seated rounds a reviewer agent never answered in;
* verification: rounds where e2e failed while every static review was complete and clean;
* judging: per judge agent, how often its vote went to the candidate in each presentation
  slot of its own packet (position bias), and how often it voted for an author of its own
  vendor (``kind``).

Figures name agents, so only runs whose authors may be shown are counted (the blind rule of
``magi.report.view.revealed``: the tally elected someone, or the run is over); the callers
(``magi stats``, the App's ``/magi stats``) filter with it and say in ``hidden`` how many
they left out. ``render`` is the terminal's text, ``markdown`` the same figures for GitHub.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from magi.core.figures.afterlife import Fate
from magi.core.review.loop import adopted_ids, unique_findings
from magi.model.run import Run

__all__ = ["FLOOR", "Ratio", "Stats", "as_json", "compute", "markdown", "merged_runs", "render"]

# Below this many runs a rate of a winner's afterlife says nothing: it is shown as "too few".
FLOOR = 3


@dataclass
class Ratio:
    count: int = 0
    total: int = 0
    runs: set[str] = field(default_factory=set)

    def add(self, run_id: str, hit: bool, n: int = 1) -> None:
        self.total += n
        self.count += n if hit else 0
        self.runs.add(run_id)

    @property
    def value(self) -> float | None:
        return round(self.count / self.total, 4) if self.total else None

    def json(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "count": self.count,
            "total": self.total,
            "runs": len(self.runs),
        }

    def text(self, floor: int = 0) -> str:
        pct = "n/a" if self.value is None else f"{self.value * 100:.0f}%"
        if self.total and len(self.runs) < floor:
            pct = "too few runs"
        noun = "run" if len(self.runs) == 1 else "runs"
        return f"{pct} ({self.count}/{self.total}, {len(self.runs)} {noun})"


def _table() -> defaultdict[str, Ratio]:
    return defaultdict(Ratio)


@dataclass
class Stats:
    runs: int = 0
    hidden: int = 0  # runs left out by the blind rule (not tallied yet)
    wins: defaultdict[str, Ratio] = field(default_factory=_table)
    # The same wins by the CLI that wrote the candidate ("codex 0.171.0"; the kind alone
    # when the run did not record a version): an election is also one between versions.
    wins_by_cli: defaultdict[str, Ratio] = field(default_factory=_table)
    produced_nothing: defaultdict[str, Ratio] = field(default_factory=_table)
    findings_per_round: Ratio = field(default_factory=Ratio)  # count findings / total rounds
    precision: defaultdict[str, Ratio] = field(default_factory=_table)
    unique: defaultdict[str, Ratio] = field(default_factory=_table)
    silent: defaultdict[str, Ratio] = field(default_factory=_table)
    e2e_only: Ratio = field(default_factory=Ratio)
    slots: defaultdict[str, defaultdict[str, Ratio]] = field(
        default_factory=lambda: defaultdict(_table)
    )
    same_vendor: defaultdict[str, Ratio] = field(default_factory=_table)
    # Afterlife (core.afterlife), per implementer agent: its wins that merged; of those
    # settled, the ones that stayed; of those merged, the ones whose issue needed another run.
    merged: defaultdict[str, Ratio] = field(default_factory=_table)
    stayed: defaultdict[str, Ratio] = field(default_factory=_table)
    follow_up: defaultdict[str, Ratio] = field(default_factory=_table)
    # Per judge agent: of its votes for a winner that merged and settled, those that stayed.
    judge_stayed: defaultdict[str, Ratio] = field(default_factory=_table)


def _kinds(run: Run) -> dict[str, str]:
    return {a.id: a.kind for a in run.config.agents}


def _implementation(s: Stats, run: Run) -> None:
    winner = run.tally.winner if run.tally else None
    for c in run.candidates:
        agent = run.agent_of(c.seat) or c.seat
        s.wins[agent].add(run.id, c.label == winner and winner is not None)
        s.wins_by_cli[run.cli_of(c.seat) or agent].add(
            run.id, c.label == winner and winner is not None
        )
        s.produced_nothing[agent].add(run.id, not c.produced and not c.verified_noop)


def _review(s: Stats, run: Run) -> None:
    if run.review is None:
        return
    adopted = adopted_ids(run.review, run.operator_fixes)
    for rnd in run.review.rounds:
        agent_of = {seat.seat: seat.agent for seat in rnd.seats}
        s.findings_per_round.runs.add(run.id)
        s.findings_per_round.total += 1
        s.findings_per_round.count += len(rnd.findings)
        unique = {f.id for f in unique_findings(rnd)}
        for f in rnd.findings:
            agent = agent_of.get(f.seat, f.seat)
            s.precision[agent].add(run.id, f.id in adopted)
            s.unique[agent].add(run.id, f.id in unique)
        for seat in rnd.seats:
            s.silent[seat.agent].add(run.id, seat.status != "ok")
        e = rnd.e2e
        clean = not rnd.missing and not any(f.severity == "blocking" for f in rnd.findings)
        if clean and e is not None and not e.deferred and e.passed is not None:
            s.e2e_only.add(run.id, not e.passed)


def _judging(s: Stats, run: Run) -> None:
    kinds = _kinds(run)
    author = {c.label: run.agent_of(c.seat) or "" for c in run.candidates}
    judge_agent = {j.seat: run.agent_of(j.seat) or j.seat for j in run.judges}
    order = {j.seat: j.order for j in run.judges}
    for v in run.votes:
        if v.status != "ok" or v.vote is None or v.seat not in order:
            continue
        agent = judge_agent[v.seat]
        seen = order[v.seat]
        for slot in range(1, len(seen) + 1):
            s.slots[agent][str(slot)].add(run.id, seen.index(v.vote) + 1 == slot)
        mine, theirs = kinds.get(agent), kinds.get(author.get(v.vote, ""))
        if mine is not None and theirs is not None:
            s.same_vendor[agent].add(run.id, mine == theirs)


def _afterlife(s: Stats, run: Run, afterlife: Mapping[str, tuple[Fate | None, bool]]) -> None:
    winner = run.tally.winner if run.tally else None
    if winner is None:
        return
    agent = run.agent_of(run.candidate(winner).seat) or winner
    found = afterlife.get(run.id)
    s.merged[agent].add(run.id, found is not None)
    if found is None:
        return
    where, follow = found
    s.follow_up[agent].add(run.id, follow)
    if where is None or where == "settling":
        return  # merged, but its base's history is not read here, or it landed too lately
    s.stayed[agent].add(run.id, where == "stayed")
    judges = {j.seat: run.agent_of(j.seat) or j.seat for j in run.judges}
    for v in run.votes:
        if v.status == "ok" and v.vote == winner and v.seat in judges:
            s.judge_stayed[judges[v.seat]].add(run.id, where == "stayed")


def merged_runs(runs: Sequence[Run]) -> dict[str, tuple[Fate | None, bool]]:
    """From the records alone: each run whose winner merged (locally or by its PR), its fate
    unknown (None: that needs the base's history), and whether its issue needed another
    run, started after the merge."""
    starts: dict[tuple[str, str], list[Any]] = defaultdict(list)  # by (repository, source)
    for r in runs:
        starts[(r.repo, r.task.source)].append(r.created_at)
    out: dict[str, tuple[Fate | None, bool]] = {}
    for r in runs:
        m = r.merge
        if m is None or m.result != "merged":
            continue
        at = m.at
        follow = (
            r.task.source.startswith("issue:")
            and at is not None
            and any(t > at for t in starts[(r.repo, r.task.source)])
        )
        out[r.id] = (None, follow)
    return out


def compute(
    runs: Sequence[Run], afterlife: Mapping[str, tuple[Fate | None, bool]] | None = None
) -> Stats:
    """The figures over ``runs``. ``afterlife``: run id -> (fate, needed a follow-up) for
    each run whose winner merged (fate None where the base's history is not read); a run
    not in it did not merge. Default: ``merged_runs`` of the records alone."""
    s = Stats(runs=len(runs))
    for run in runs:
        _implementation(s, run)
        _review(s, run)
        _judging(s, run)
        _afterlife(s, run, merged_runs(runs) if afterlife is None else afterlife)
    return s


def _map(table: dict[str, Ratio]) -> dict[str, Any]:
    return {k: table[k].json() for k in sorted(table)}


def as_json(s: Stats) -> dict[str, Any]:
    fpr = s.findings_per_round
    return {
        "runs": s.runs,
        "hidden": s.hidden,
        "implementation": {
            "win_rate": _map(s.wins),
            "win_rate_by_cli_version": _map(s.wins_by_cli),
            "produced_nothing": _map(s.produced_nothing),
        },
        "review": {
            "findings_per_round": {
                "value": round(fpr.count / fpr.total, 3) if fpr.total else None,
                "findings": fpr.count,
                "rounds": fpr.total,
                "runs": len(fpr.runs),
            },
            "precision": _map(s.precision),
            "unique_find_rate": _map(s.unique),
            "never_answered": _map(s.silent),
        },
        "verification": {"e2e_failed_while_reviews_clean": s.e2e_only.json()},
        "judging": {
            "vote_by_slot": {a: _map(s.slots[a]) for a in sorted(s.slots)},
            "same_vendor_vote": _map(s.same_vendor),
            "picked_winner_stayed_merged": _map(s.judge_stayed),
        },
        "afterlife": {
            "merged": _map(s.merged),
            "stayed_merged": _map(s.stayed),
            "needed_follow_up": _map(s.follow_up),
            "floor": FLOOR,
        },
    }


def render(s: Stats) -> str:
    """The plain-text figures ``magi stats`` prints."""
    lines = [f"{s.runs} runs on disk. Relative figures on your workload, not a benchmark."]
    if s.hidden:
        lines.append(_hidden(s.hidden))
    lines.append("")

    def table(title: str, rows: dict[str, Ratio], floor: int = 0) -> None:
        lines.append(title)
        lines.extend(f"  {k:<16} {rows[k].text(floor)}" for k in sorted(rows))
        if not rows:
            lines.append("  (no data)")

    table("win rate (wins / runs implemented)", s.wins)
    table("win rate by CLI version", s.wins_by_cli)
    table("produced nothing", s.produced_nothing)
    fpr = s.findings_per_round
    per = f"{fpr.count / fpr.total:.2f}" if fpr.total else "n/a"
    lines.append(
        f"findings per round: {per} ({fpr.count} in {fpr.total} rounds, {len(fpr.runs)} runs)"
    )
    table("reviewer precision (adopted / submitted)", s.precision)
    table("unique-find rate", s.unique)
    table("reviewer rounds never answered", s.silent)
    lines.append(f"e2e failed while every static review was clean: {s.e2e_only.text()}")
    lines.append("judge votes by presentation slot")
    for agent in sorted(s.slots):
        cells = ", ".join(f"slot {k}: {v.text()}" for k, v in sorted(s.slots[agent].items()))
        lines.append(f"  {agent:<16} {cells}")
    if not s.slots:
        lines.append("  (no data)")
    table("judge voted for its own vendor (kind)", s.same_vendor)
    for title, rows in _afterlife_tables(s):
        table(title, rows, FLOOR)
    return "\n".join(lines) + "\n"


def _afterlife_tables(s: Stats) -> list[tuple[str, dict[str, Ratio]]]:
    return [
        ("do winners stay merged? winner merged (merged / wins)", s.merged),
        ("stayed merged (stayed / settled merges)", s.stayed),
        ("issue needed another run (follow-ups / merges)", s.follow_up),
        ("judge's pick stayed merged (per judge)", s.judge_stayed),
    ]


def _hidden(n: int) -> str:
    runs = "run is" if n == 1 else "runs are"
    return f"{n} {runs} not counted: not tallied yet, so who sat where stays hidden."


def markdown(s: Stats, *, where: str = "stored") -> str:
    """The same figures as ``render``, as GitHub markdown (one list per figure)."""
    noun = "run" if s.runs == 1 else "runs"
    lines = [f"**{s.runs} {where} {noun}.** Relative figures on your workload, not a benchmark."]
    if s.hidden:
        lines.append(f"_{_hidden(s.hidden)}_")

    def table(title: str, rows: dict[str, Ratio], floor: int = 0) -> None:
        lines.extend(["", f"**{title}**"])
        lines.extend(f"- `{k}`: {rows[k].text(floor)}" for k in sorted(rows))
        if not rows:
            lines.append("- (no data)")

    table("win rate (wins / runs implemented)", s.wins)
    table("win rate by CLI version", s.wins_by_cli)
    table("produced nothing", s.produced_nothing)
    fpr = s.findings_per_round
    per = f"{fpr.count / fpr.total:.2f}" if fpr.total else "n/a"
    lines.extend(
        [
            "",
            f"**findings per round:** {per} ({fpr.count} in {fpr.total} rounds,"
            f" {len(fpr.runs)} runs)",
        ]
    )
    table("reviewer precision (adopted / submitted)", s.precision)
    table("unique-find rate", s.unique)
    table("reviewer rounds never answered", s.silent)
    lines.extend(["", f"**e2e failed while every static review was clean:** {s.e2e_only.text()}"])
    lines.extend(["", "**judge votes by presentation slot**"])
    for agent in sorted(s.slots):
        cells = ", ".join(f"slot {k}: {v.text()}" for k, v in sorted(s.slots[agent].items()))
        lines.append(f"- `{agent}`: {cells}")
    if not s.slots:
        lines.append("- (no data)")
    table("judge voted for its own vendor (kind)", s.same_vendor)
    for title, rows in _afterlife_tables(s):
        table(title, rows, FLOOR)
    return "\n".join(lines) + "\n"
