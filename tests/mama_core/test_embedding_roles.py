"""Queries and passages: e5 embeds them with different prefixes, MiniLM the same way,
and MAMA uses the right one on each side (search = query, stored text = passage)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from mama_core.embeddings import PASSAGE, QUERY, Embedder, GgufEmbedder
from mama_core.memory import Engine
from mama_core.model import embedding_text
from mama_core.store import Store
from tests.mama_core.recall.world import World


@pytest.fixture
def e5_world(store: Store, e5_embedder: GgufEmbedder) -> Iterator[World]:
    with Engine(store, e5_embedder) as engine:
        w = World(store, engine, e5_embedder)
        try:
            yield w
        finally:
            w.close()


def test_e5_puts_its_prefix_on_each_role(e5_embedder: GgufEmbedder) -> None:
    assert e5_embedder.prefix(QUERY) == "query: "
    assert e5_embedder.prefix(PASSAGE) == "passage: "
    text = "Wann ist die Miete fällig?"
    assert e5_embedder.token_ids(text, QUERY) == e5_embedder.token_ids("query: " + text)
    assert e5_embedder.token_ids(text, PASSAGE) == e5_embedder.token_ids("passage: " + text)
    assert e5_embedder.token_ids(text, QUERY) != e5_embedder.token_ids(text)
    query = e5_embedder.embed_one(text, QUERY)
    passage = e5_embedder.embed_one(text, PASSAGE)
    assert float(query @ passage) < 0.99  # different vectors for the same words
    assert np.array_equal(e5_embedder.embed([text], QUERY)[0], query)  # one call, one answer
    with pytest.raises(ValueError):
        e5_embedder.embed_one(text, "question")  # type: ignore[arg-type]


def test_minilm_has_no_prefixes_so_both_roles_agree(embedder: Embedder) -> None:
    assert isinstance(embedder, GgufEmbedder)
    assert embedder.prefix(QUERY) == embedder.prefix(PASSAGE) == ""
    text = "When is the rent due?"
    assert np.array_equal(embedder.embed_one(text, QUERY), embedder.embed_one(text, PASSAGE))
    assert not np.array_equal(embedder.embed_one(text), embedder.embed_one("Rent is due."))


def test_stored_vectors_are_passages_and_search_embeds_a_query(
    e5_world: World, e5_embedder: GgufEmbedder
) -> None:
    summary = "Die Miete ist am ersten Werktag des Monats fällig."
    jid = e5_world.save(summary)
    blob = e5_world.reader.execute(
        "SELECT vector FROM embeddings WHERE judgment_id = ? AND model_id = ?",
        (jid, e5_embedder.model_id),
    ).fetchone()[0]
    stored = np.frombuffer(blob, dtype="<f4")
    text = embedding_text("", summary, "", "")
    as_passage = e5_embedder.embed_one(text, PASSAGE)
    as_query = e5_embedder.embed_one(text, QUERY)
    assert float(stored @ as_passage) > 0.9999
    assert float(stored @ as_query) < 0.99

    question = "When is the rent due?"
    vector = e5_world.recall.embed_query(question)
    assert vector is not None
    assert np.array_equal(vector, e5_embedder.embed_one(question, QUERY))
    assert not np.array_equal(vector, e5_embedder.embed_one(question, PASSAGE))
    assert e5_world.ids(question)[0] == jid
