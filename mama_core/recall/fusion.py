"""Reciprocal rank fusion (``rrf-v1``): how ranked lists from the arms become one.

    fused(d) = sum over arms a that ranked d:  weight_a / (k + rank_a(d))

with ranks counted from 1. It needs no score calibration between BM25 and
cosine, which live on unrelated scales. Ties are ordered by the higher (newer)
id, so a result list is the same on every run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mama_core.recall.query import ArmScore


@dataclass(frozen=True)
class Ranked:
    """One arm's candidate: id, the arm's score, rank from 1."""

    id: int
    score: float
    rank: int


@dataclass(frozen=True)
class Fused:
    """A fused candidate with its fused score and the arms that ranked it."""

    id: int
    score: float
    arms: Mapping[str, ArmScore]


def rrf(
    arms: Mapping[str, Sequence[Ranked]],
    weights: Mapping[str, float],
    k: int,
) -> list[Fused]:
    """Fuse the arms' lists; best first, ties by higher id."""
    totals: dict[int, float] = {}
    found: dict[int, dict[str, ArmScore]] = {}
    for arm, ranked in arms.items():
        weight = weights.get(arm, 0.0)
        if weight <= 0:
            continue
        for item in ranked:
            totals[item.id] = totals.get(item.id, 0.0) + weight / (k + item.rank)
            found.setdefault(item.id, {})[arm] = ArmScore(item.rank, item.score)
    fused = [Fused(jid, score, found[jid]) for jid, score in totals.items()]
    # Rounded so that sums of the same terms in another order still tie exactly.
    fused.sort(key=lambda f: (-round(f.score, 12), -f.id))
    return fused


def rank_list(pairs: Sequence[tuple[int, float]]) -> list[Ranked]:
    """``(id, score)`` pairs already in arm order, as ranked candidates."""
    return [Ranked(jid, score, rank) for rank, (jid, score) in enumerate(pairs, start=1)]
