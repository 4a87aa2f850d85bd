"""Fixtures for the connector tests: a real encrypted store with the app's tables."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.durable.schema import open_runtime_db
from app.durable.transaction import RuntimeDb
from mama_core.store import Store
from tests.app.runtime.support import clock, embedder, engine, store

__all__ = ["app_db", "clock", "embedder", "engine", "store"]


@pytest.fixture
def app_db(store: Store) -> Iterator[RuntimeDb]:
    """The runtime connection, with the app's migration series applied."""
    db = open_runtime_db(store)
    yield db
    db.close()
