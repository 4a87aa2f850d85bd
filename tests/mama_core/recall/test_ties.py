"""Ties are ordered deterministically: by score, then the newer id first."""

from __future__ import annotations

import numpy as np

from mama_core.recall import PRESETS
from mama_core.recall.fusion import Ranked, rrf
from mama_core.recall.vector_cache import top_k
from tests.mama_core.recall.world import World


def test_identical_rows_rank_newest_first_every_time(world: World) -> None:
    # The same words six times on purpose: the owner insists (else "already remembered").
    ids = [
        world.save("Water the office plants on Wednesdays", even_if_duplicate=True)
        for _ in range(6)
    ]
    for config in PRESETS.values():
        runs = [world.ids("water office plants", config=config) for _ in range(3)]
        assert runs[0] == runs[1] == runs[2]
        assert runs[0] == sorted(ids, reverse=True)


def test_rrf_ties_break_by_id() -> None:
    arms = {
        "bm25": [Ranked(1, 5.0, 1), Ranked(2, 4.0, 2)],
        "vector": [Ranked(2, 0.9, 1), Ranked(1, 0.8, 2)],
    }
    fused = rrf(arms, {"bm25": 1.0, "vector": 1.0}, 60)
    assert [f.id for f in fused] == [2, 1]
    assert fused[0].score == fused[1].score


def test_vector_top_k_keeps_all_ties_at_the_cut() -> None:
    ids = np.arange(1, 11, dtype=np.int64)
    scores = np.array([0.5] * 10, dtype=np.float32)
    assert [m.id for m in top_k(ids, scores, 3)] == [10, 9, 8]
    scores[0] = 0.9
    assert [m.id for m in top_k(ids, scores, 3)] == [1, 10, 9]
