"""Fixtures for the judgment engine: a real SQLCipher file per test and the real
GGUF embedder, built once per machine into the test model cache."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mama_core.embeddings import Embedder
from mama_core.memory import Engine, EngineConfig
from mama_core.store import Store


@pytest.fixture
def engine(store: Store, embedder: Embedder) -> Iterator[Engine]:
    with Engine(store, embedder, EngineConfig()) as opened:
        yield opened
