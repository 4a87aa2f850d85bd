"""Fixtures for guidance rendering: a real SQLCipher store per test, written through the real
engine, and the real GGUF embedder (built once into the test model cache)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mama_core.embeddings import Embedder, load_embedder
from mama_core.memory import Engine
from mama_core.store import DbKey, Store
from tests.mama_core.recall.world import World


@pytest.fixture(scope="session")
def embedder(model_cache_dir: Path) -> Embedder:
    return load_embedder(None, model_cache_dir)


@pytest.fixture
def store(tmp_path: Path, db_key: DbKey) -> Iterator[Store]:
    opened = Store.open(tmp_path / "mama.db", db_key)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def world(store: Store, embedder: Embedder) -> Iterator[World]:
    with Engine(store, embedder) as engine:
        w = World(store, engine, embedder)
        try:
            yield w
        finally:
            w.close()
