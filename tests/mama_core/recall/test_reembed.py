"""Re-embedding after a model change: every judgment gets a vector, in batches,
resumable after an interruption, never for a purged row."""

from __future__ import annotations

import pytest

from mama_core.embeddings import GgufEmbedder
from mama_core.recall import Recall, RecallQuery, VectorCache
from mama_core.recall.reembed import count_missing, reembed
from tests.mama_core.recall.world import World


class Interrupted(Exception):
    pass


@pytest.fixture
def new_model(world: World) -> GgufEmbedder:
    """The same GGUF file under another model id: what a model change looks like."""
    base = world.embedder
    assert isinstance(base, GgufEmbedder)
    return GgufEmbedder(base.model_path, model_id="test-model-v2")


def test_reembed_fills_every_vector_and_resumes(world: World, new_model: GgufEmbedder) -> None:
    ids = [world.save(f"Fact number {i}: the meeting room {i} has a projector") for i in range(10)]
    purged = world.save("The door code is 4711")
    world.purge(purged)
    conn = world.store.conn
    assert count_missing(conn, new_model.model_id) == 10  # purged rows need none

    calls: list[tuple[int, int]] = []

    def stop_after_first_batch(done: int, total: int, message: str) -> None:
        calls.append((done, total))
        if done >= 4:
            raise Interrupted

    with pytest.raises(Interrupted):
        reembed(world.store, new_model, stop_after_first_batch, batch=4)
    assert count_missing(conn, new_model.model_id) == 6  # the first batch was committed

    seen: list[tuple[int, int]] = []
    result = reembed(world.store, new_model, lambda d, t, m: seen.append((d, t)), batch=4)
    assert result.embedded == 6 and result.remaining == 0
    assert seen[0] == (0, 6) and seen[-1] == (6, 6)
    assert reembed(world.store, new_model).embedded == 0  # nothing left to do

    cache = VectorCache.load(world.reader, new_model.model_id, new_model.dim)
    assert cache.vector_count == 10
    recall = Recall(world.reader, new_model, cache)
    hits = recall.search(RecallQuery("meeting room 7 projector", scopes=["global"]))
    assert hits[0].id == ids[7]
