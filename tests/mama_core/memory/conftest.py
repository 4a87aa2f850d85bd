"""Fixtures for the judgment engine: a real SQLCipher file per test and the real
GGUF embedder, built once per machine into the test model cache."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mama_core.embeddings import Embedder, load_embedder
from mama_core.memory import Engine, EngineConfig
from mama_core.store import DbKey, Store


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
def engine(store: Store, embedder: Embedder) -> Iterator[Engine]:
    with Engine(store, embedder, EngineConfig()) as opened:
        yield opened
