"""The vector cache: loaded from the embeddings table, kept current by change-sets."""

from __future__ import annotations

import numpy as np
import pytest

from mama_core.recall import Predicate, Recall, RecallQuery, VectorCache
from tests.mama_core.recall.world import World


def _everything(cache: VectorCache) -> list[int]:
    predicate = Predicate.build(["global", "project:x"], statuses=("active",))
    return sorted(int(i) for i in np.flatnonzero(cache.mask(predicate)))


def test_change_sets_keep_the_cache_equal_to_a_fresh_load(world: World) -> None:
    a = world.save("Lunch is at noon")
    b = world.save("Lunch moved to one o'clock", replaces=[a])
    c = world.save("Parking is behind the building", scopes=["project:x"])
    d = world.save("The printer is on floor two")
    world.retire(d)
    e = world.save("The fire exit is by the stairs")
    world.purge(e)
    fresh = VectorCache.load(world.reader, world.embedder.model_id, world.embedder.dim)
    assert len(world.cache) == len(fresh) == 5
    assert world.cache.vector_count == fresh.vector_count == 4  # the purged row lost its vector
    assert _everything(world.cache) == _everything(fresh)
    vec = world.embedder.embed_one("where is lunch")
    predicate = Predicate.build(["global", "project:x"])
    assert world.cache.search(vec, predicate, 10) == fresh.search(vec, predicate, 10)
    assert {m.id for m in fresh.search(vec, predicate, 10)} == {b, c}


def test_float16_cache_ranks_like_float32(world: World) -> None:
    texts = ["Cats sleep a lot", "Dogs like walks", "Invoices are due monthly", "Tea at four"]
    ids = [world.save(t) for t in texts]
    half = VectorCache.load(
        world.reader, world.embedder.model_id, world.embedder.dim, dtype=np.float16
    )
    assert half.nbytes < world.cache.nbytes
    recall = Recall(world.reader, world.embedder, half)
    query = RecallQuery("when are invoices due", scopes=["global"])
    assert recall.search(query)[0].id == ids[2]
    assert [h.id for h in recall.search(query)] == world.ids("when are invoices due")


def test_nbytes_grows_with_rows(world: World) -> None:
    before = world.cache.nbytes
    for i in range(20):
        world.save(f"Note number {i} about the quarterly plan")
    assert world.cache.nbytes > before
    assert world.cache.vector_count == 20


def test_wrong_model_is_refused(world: World) -> None:
    other = VectorCache("some-other-model", world.embedder.dim)
    with pytest.raises(ValueError):
        Recall(world.reader, world.embedder, other)
    with pytest.raises(ValueError):
        VectorCache("m", 4, dtype=np.float64)
