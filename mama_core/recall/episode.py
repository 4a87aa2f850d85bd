"""Episode neighbours (``episode-v1``): a strong hit lends part of its vote to its context.

A question is often answered by the turn *next to* the one that matches its
words ("what did Bob say about the deadline?" matches the question, the answer
follows it). Judgments saved one after another with the same event time
(``valid_from``) belong to one episode: one conversation, one meeting, one
imported thread. This stage treats "is an episode neighbour of a fused hit" as
one more ranked list and fuses it by the same reciprocal-rank rule:

    bonus(d) = weight / (k + r),  r = best fused rank among the top ``seeds``
                                      hits within ``width`` ids of d in d's episode

so a neighbour of the first hit gets ``weight`` rank-1 units, the neighbour of
the tenth far less, and a row that is both a hit and a neighbour adds the two.
Neighbours must pass the same read predicate as any hit (they are looked up in
the vector cache's predicate mask; the final SQL fetch checks again), so the
stage can never surface a row the caller may not read.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mama_core.recall.fusion import Fused
from mama_core.recall.query import ArmScore
from mama_core.recall.vector_cache import RowMask, VectorCache

STAGE = "episode-v1"
# How a hit raised by this stage names it in ``RecallHit.arms`` / ``found_by``:
# rank is the best rank of the hit it neighbours, score the bonus it lent.
STAGE_ARM = "episode"


def with_episode_neighbours(
    fused: Sequence[Fused],
    cache: VectorCache,
    rows: RowMask,
    *,
    weight: float,
    seeds: int,
    width: int,
    k: int,
) -> list[Fused]:
    """``fused`` with each top hit's episode neighbours raised (or added), best first."""
    top = [f.id for f in fused[:seeds]]
    pairs = cache.episode_neighbours(top, width)
    if not pairs:
        return list(fused)
    candidates = np.fromiter((n for _, n in pairs), dtype=np.int64, count=len(pairs))
    passes, _unknown = rows.admits(candidates)
    rank_of = {jid: rank for rank, jid in enumerate(top, start=1)}
    best: dict[int, int] = {}
    for (seed, neighbour), ok in zip(pairs, passes.tolist(), strict=True):
        if ok:
            rank = rank_of[seed]
            best[neighbour] = min(best.get(neighbour, rank), rank)
    if not best:
        return list(fused)
    out: list[Fused] = []
    for item in fused:
        rank = best.pop(item.id, None)
        if rank is None:
            out.append(item)
            continue
        bonus = weight / (k + rank)
        arms = {**item.arms, STAGE_ARM: ArmScore(rank, bonus)}
        out.append(Fused(item.id, item.score + bonus, arms))
    # Neighbours no arm ranked enter on the bonus alone.
    out.extend(
        Fused(jid, weight / (k + rank), {STAGE_ARM: ArmScore(rank, weight / (k + rank))})
        for jid, rank in best.items()
    )
    out.sort(key=lambda f: (-round(f.score, 12), -f.id))
    return out
