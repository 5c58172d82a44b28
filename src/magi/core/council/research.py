"""Research mode's rules: clustering findings, who judges a solo finding, and seed 001's table.

Findings reach the clerk as ``F1``, ``F2`` ... without their seats; a cluster is findings
that assert the same fact. Supporters are distinct seats (one seat saying a thing twice
is one supporter). Two or more supporters: adopted. One: a solo finding, judged in one
deliberation pass by the *other* seats only (a seat never reviews its own claim), and
classified from their verdicts:

==========================================  ====================================
verdicts                                    result
==========================================  ====================================
all agree                                   adopted
agree + conditional, or all conditional     conditionally adopted (conditions)
all reject                                  rejected
agree + reject                              conditionally adopted, council split
conditional + reject                        conditionally adopted, both noted
none (every judge failed)                   unverified
==========================================  ====================================

A judge that fails to answer does not veto: classification uses the verdicts there are,
and the missing judge is recorded. With one verdict (a two-seat council) that verdict
decides. Rejected findings stay in the report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["Cluster", "Outcome", "classify_solo", "clusters", "judges_of"]

Outcome = Literal["adopted", "conditional", "rejected", "unverified"]


@dataclass(frozen=True)
class Cluster:
    labels: tuple[str, ...]  # F-labels of the findings in it
    supporters: tuple[str, ...]  # distinct seats, in panel order

    @property
    def solo(self) -> bool:
        return len(self.supporters) == 1


def clusters(
    groups: Sequence[Sequence[str]], owner: Mapping[str, str], seats: Sequence[str]
) -> list[Cluster]:
    """Clusters from the (already validated) groups; ``owner`` maps F-label -> seat."""
    order = {s: i for i, s in enumerate(seats)}
    out = []
    for group in groups:
        supporters = sorted({owner[label] for label in group}, key=order.__getitem__)
        out.append(Cluster(tuple(group), tuple(supporters)))
    return out


def judges_of(cluster: Cluster, answering: Sequence[str]) -> list[str]:
    """The seats that judge a solo finding: every answering seat but its author."""
    return [s for s in answering if s not in cluster.supporters]


def classify_solo(verdicts: Sequence[str]) -> tuple[Outcome, str]:
    """(outcome, note) from the verdicts of the seats that judged a solo finding."""
    kinds = set(verdicts)
    unknown = kinds - {"agree", "conditional", "reject"}
    if unknown:
        raise ValueError(f"unknown verdicts {sorted(unknown)}")
    if not kinds:
        return "unverified", "no judge answered; the finding stands unverified"
    if kinds == {"agree"}:
        return "adopted", ""
    if kinds == {"reject"}:
        return "rejected", ""
    if "reject" not in kinds:
        return "conditional", "adopted on the conditions noted"
    if "agree" in kinds:
        return "conditional", "the council split: agree and reject, both sides quoted"
    return "conditional", "the conditions and the rejection stand side by side"
