"""Fixtures for the runtime tests (defined in ``support``)."""

from __future__ import annotations

from tests.app.runtime.support import clock, embedder, engine, runtime_db, store

__all__ = ["clock", "embedder", "engine", "runtime_db", "store"]
