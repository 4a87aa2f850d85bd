"""Fixtures for the injection tests: real stores, and the real agent CLIs from npm."""

from __future__ import annotations

from tests.app.backends.conftest import claude_bin, codex_bin
from tests.app.runtime.support import clock, embedder, engine, runtime_db, store

__all__ = ["claude_bin", "clock", "codex_bin", "embedder", "engine", "runtime_db", "store"]
