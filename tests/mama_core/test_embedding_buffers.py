"""llama.cpp's buffers sized for embedding (a small query context, a bulk one made only
for bulk calls) give the vectors recorded before they were resized: one text at a
time, all at once, and queries, for both built-in models, long texts at the cap
included."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mama_core.embeddings import PASSAGE, QUERY, GgufEmbedder
from mama_core.embeddings.gguf import QUERY_OUTPUT_BYTES
from tests.mama_core.data.buffer_texts import BUFFER_TEXTS

DATA = Path(__file__).parent / "data"
SAME = 0.9999
"""Cosine to the recorded vector: llama.cpp's arithmetic order may move the last digits."""


@pytest.fixture(params=["minilm", "e5"])
def model(
    request: pytest.FixtureRequest, embedder: GgufEmbedder, e5_embedder: GgufEmbedder
) -> tuple[GgufEmbedder, np.ndarray]:
    """(embedder, the vectors recorded before the change: one by one, batched, queries)."""
    chosen = embedder if request.param == "minilm" else e5_embedder
    return chosen, np.load(DATA / f"buffer_vectors_{request.param}.npy")


def test_vectors_match_those_recorded_before_the_buffers_changed(
    model: tuple[GgufEmbedder, np.ndarray],
) -> None:
    embedder, recorded = model
    n = len(BUFFER_TEXTS)
    assert [len(embedder.token_ids(t, PASSAGE)) for t in BUFFER_TEXTS][-2] == embedder.max_tokens
    one = np.stack([embedder.embed_one(text, PASSAGE) for text in BUFFER_TEXTS])
    batch = embedder.embed(list(BUFFER_TEXTS), PASSAGE)
    queries = embedder.embed(list(BUFFER_TEXTS[:3]), QUERY)
    assert np.min(np.sum(one * recorded[:n], axis=1)) >= SAME
    assert np.min(np.sum(batch * recorded[n : 2 * n], axis=1)) >= SAME
    assert np.min(np.sum(queries * recorded[2 * n :], axis=1)) >= SAME
    # Control: the bound tells texts apart (each vector against its neighbour's).
    assert np.max(np.sum(one * np.roll(recorded[:n], 1, axis=0), axis=1)) < SAME


def test_a_query_runs_in_a_small_context_and_a_bulk_call_in_another(
    model: tuple[GgufEmbedder, np.ndarray],
) -> None:
    embedder, _ = model
    embedder.close()  # a fresh runtime: no context left by another test
    text = "When is the rent due?"
    embedder.embed_one(text, QUERY)
    runtime = embedder._runtime  # pyright: ignore[reportPrivateUsage]
    assert runtime is not None and runtime.has_context and not runtime.holds_bulk_context
    assert runtime.query_batch >= embedder.max_tokens  # a text at the cap fits one decode
    tokens = len(embedder.token_ids(text, QUERY))
    # Sized for the query, not for a bulk call (before: 32 MB for either model).
    assert runtime.reserved_bytes <= max(QUERY_OUTPUT_BYTES, tokens * runtime.token_bytes)
    assert runtime.holds_large_context == (runtime.reserved_bytes > QUERY_OUTPUT_BYTES)
    embedder.embed([f"note {i}" for i in range(runtime.query_seqs + 1)], PASSAGE)
    assert runtime.holds_bulk_context and runtime.holds_large_context  # freed once idle
    assert runtime.reserved_bytes > QUERY_OUTPUT_BYTES  # control: the bulk one is bigger
