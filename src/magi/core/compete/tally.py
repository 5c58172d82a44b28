"""The mechanical tally: which candidate the judges elected, and the rule that decided.

This is the contract. The facilitator is code, so that no model can be persuaded out of
neutrality and every outcome can be recomputed from the record.

**Inputs** are already-parsed labels, keyed by judge seat (``judge-1`` ...). Nothing here
reads text an agent wrote. ``labels`` are every candidate; ``viable`` those that may win
(produced a change, not disqualified); ``judges`` is the configured panel size.

**Whose vote counts.** A judge's private final vote counts when it names a viable label.
A judge whose final vote was lost (never answered, unparseable, or naming a label that
is not viable) counts with the first viable label of its *first* ranking, recorded with
``source="first_ranking"``: that judge did weigh the candidates, and dropping it would let
a timeout change the outcome. A judge with neither is not counted.

**Quorum.** The counted judges must be a strict majority of the configured panel (2 of 3,
3 of 4). Without quorum there is no winner: a candidate elected by one judge of three is
one model's opinion, and the run should say so rather than merge it.

**Winner.** Most counted votes wins. A tie is broken, in this order:

1. Borda count over the first rankings of every judge that gave one (whether or not its
   final vote counted). Each ranking is filtered to the viable labels; with ``n`` viable
   labels the first gets ``n-1`` points, the next ``n-2``, and so on; labels a ranking
   leaves out get 0. Only the tied labels are compared. First rankings are used because
   they were given independently, before any judge heard another argue.
2. Label order (``A`` before ``B``): arbitrary, but the labels were assigned by a seeded
   shuffle, so this favours no author, and it makes the outcome a pure function of the
   record.

``tie_break`` records which rule decided and its figures, e.g. ``tie 1-1 between A and B;
Borda on first rankings A=3 B=2``. ``counts`` holds every viable label, 0 when none.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from magi.model.run import CountedVote, Tally


def _seat_key(seat: str) -> tuple[str, int, str]:
    # judge-10 after judge-9: seats are counted in a stable, human order.
    m = re.fullmatch(r"(.*?)(\d+)", seat)
    return (m.group(1), int(m.group(2)), "") if m else (seat, -1, seat)


def _first_viable(ranking: Sequence[str] | None, viable: Sequence[str]) -> str | None:
    for label in ranking or ():
        if label in viable:
            return label
    return None


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def borda(
    first_rankings: Mapping[str, Sequence[str] | None], viable: Sequence[str]
) -> dict[str, int]:
    """Borda points per viable label over the first rankings (see the module docstring)."""
    points = dict.fromkeys(sorted(viable), 0)
    n = len(points)
    for seat in sorted(first_rankings, key=_seat_key):
        ranked: list[str] = []
        for label in first_rankings[seat] or ():
            if label in points and label not in ranked:
                ranked.append(label)
        for place, label in enumerate(ranked):
            points[label] += n - 1 - place
    return points


def count_votes(
    *,
    labels: Sequence[str],
    viable: Sequence[str],
    judges: int,
    first_rankings: Mapping[str, Sequence[str] | None],
    votes: Mapping[str, str | None],
) -> Tally:
    """Count the judges' votes into a ``Tally`` by the rule in the module docstring."""
    unknown = sorted(set(viable) - set(labels))
    if unknown:
        raise ValueError(f"viable labels {unknown} are not candidates {list(labels)}")
    seats = sorted(set(first_rankings) | set(votes), key=_seat_key)
    if len(seats) > judges:
        raise ValueError(f"{len(seats)} judge seats answered but the panel has {judges}")

    counts = dict.fromkeys(sorted(viable), 0)
    counted: list[CountedVote] = []
    for seat in seats:
        vote = votes.get(seat)
        if vote is not None and vote in counts:
            counted.append(CountedVote(seat=seat, label=vote, source="vote"))
        elif (fallback := _first_viable(first_rankings.get(seat), list(counts))) is not None:
            counted.append(CountedVote(seat=seat, label=fallback, source="first_ranking"))
        else:
            continue
        counts[counted[-1].label] += 1

    answered = len(counted)
    quorum = answered * 2 > judges
    winner, tie_break, reason = _decide(counts, answered, judges, quorum, first_rankings)
    return Tally(
        winner=winner,
        counts=counts,
        counted=counted,
        judges=judges,
        answered=answered,
        quorum=quorum,
        tie_break=tie_break,
        reason=reason,
    )


def _decide(
    counts: dict[str, int],
    answered: int,
    judges: int,
    quorum: bool,
    first_rankings: Mapping[str, Sequence[str] | None],
) -> tuple[str | None, str | None, str]:
    """(winner, tie_break, reason) for counts already made."""
    if not counts:
        return None, None, "no viable candidate"
    if not quorum:
        need = judges // 2 + 1
        why = f"no quorum: {answered} of {judges} judges could be counted; a majority ({need})"
        return None, None, f"{why} is needed"
    top = max(counts.values())
    tied = [label for label, n in counts.items() if n == top]  # counts are in label order
    of = f"{top} of {answered} counted votes ({judges} judges on the panel)"
    if len(tied) == 1:
        return tied[0], None, f"{tied[0]} won with {of}"

    note = f"tie {'-'.join(str(top) for _ in tied)} between {_and(tied)}"
    points = borda(first_rankings, list(counts))
    shown = " ".join(f"{label}={points[label]}" for label in tied)
    best = max(points[label] for label in tied)
    leaders = [label for label in tied if points[label] == best]
    winner = leaders[0]
    if len(leaders) == 1:
        tie_break = f"{note}; Borda on first rankings {shown}"
        how = "on Borda points over the first rankings"
    else:
        tie_break = f"{note}; Borda on first rankings {shown}, still tied; label order: {winner}"
        how = "on label order, after Borda over the first rankings left a tie"
    return winner, tie_break, f"{winner} won a tie with {of}, {how}"


def uncontested(label: str) -> Tally:
    """The tally for a single viable candidate: elected without a panel."""
    return Tally(
        winner=label,
        judges=0,
        answered=0,
        quorum=True,
        uncontested=True,
        reason=f"{label} was the only viable candidate; no judge sat",
    )


def first_choices_split(
    first_rankings: Mapping[str, Sequence[str] | None], viable: Sequence[str]
) -> bool:
    """True when the judges that answered do not all put the same viable label first."""
    firsts = {_first_viable(r, viable) for r in first_rankings.values()}
    firsts.discard(None)
    return len(firsts) > 1
