"""llama.cpp's memory for a large vocabulary: the output buffer it sizes by vocabulary x
tokens is freed soon after a bulk run, and an idle embedder frees its model."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mama_core.embeddings import PASSAGE, QUERY, GgufEmbedder
from mama_core.embeddings.gguf import KEEP_OUTPUT_BYTES, QUERY_OUTPUT_BYTES


def test_a_bulk_call_frees_the_big_context_and_a_query_makes_a_small_one(
    e5_model: tuple[Path, str],
) -> None:
    path, model_id = e5_model
    embedder = GgufEmbedder(path, model_id=model_id)
    try:
        query = embedder.embed_one("Wann ist die Miete fällig?", QUERY)
        runtime = embedder._runtime  # pyright: ignore[reportPrivateUsage]
        assert runtime is not None and runtime.has_context and not runtime.holds_bulk_context
        tokens = len(embedder.token_ids("Wann ist die Miete fällig?", QUERY))
        assert runtime.reserved_bytes <= max(QUERY_OUTPUT_BYTES, tokens * runtime.token_bytes)
        assert runtime.n_seq_max * runtime.token_bytes <= KEEP_OUTPUT_BYTES
        long_texts = [f"Note {i}: " + "the rent is paid on the first day " * 6 for i in range(40)]
        bulk = embedder.embed(long_texts, PASSAGE)
        assert runtime.holds_bulk_context  # kept for the next batch of a bulk run…
        assert embedder.context_released.wait(timeout=60)  # …and freed once idle
        assert not runtime.has_context
        assert embedder.is_loaded  # the model stays
        again = embedder.embed_one("Wann ist die Miete fällig?", QUERY)
        assert runtime.has_context
        assert np.allclose(query, again, atol=1e-5)  # a new context, the same vectors
        # Packed with others or alone, the same vector up to llama.cpp's arithmetic order.
        assert float(bulk[0] @ embedder.embed(long_texts[:1], PASSAGE)[0]) > 0.9999
    finally:
        embedder.close()


def test_an_idle_embedder_frees_its_model_and_loads_it_again(
    e5_model: tuple[Path, str],
) -> None:
    path, model_id = e5_model
    embedder = GgufEmbedder(path, model_id=model_id, idle_release_s=0.2)
    try:
        first = embedder.embed_one("hello", QUERY)
        assert embedder.released.wait(timeout=60)
        assert not embedder.is_loaded
        second = embedder.embed_one("hello", QUERY)
        assert embedder.is_loaded and not embedder.released.is_set()
        assert np.allclose(first, second, atol=1e-5)
    finally:
        embedder.close()
    kept = GgufEmbedder(path, model_id=model_id)  # control: no idle release asked for
    try:
        kept.embed_one("hello", QUERY)
        assert not kept.released.wait(timeout=0.5) and kept.is_loaded
    finally:
        kept.close()
