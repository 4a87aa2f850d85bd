"""Fixtures for recall: a real SQLCipher store per test, written through the real
engine, and the real GGUF embedder (built once into the test model cache)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mama_core.embeddings import Embedder
from mama_core.memory import Engine
from mama_core.store import Store
from tests.mama_core.recall.world import World


@pytest.fixture
def world(store: Store, embedder: Embedder) -> Iterator[World]:
    with Engine(store, embedder) as engine:
        w = World(store, engine, embedder)
        try:
            yield w
        finally:
            w.close()
