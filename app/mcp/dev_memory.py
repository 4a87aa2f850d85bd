"""Where development memory lives, and opening it.

Coding agents get their own encrypted store (``dev-memory.db`` in the data
folder) so that what they learn about code never mixes with the owner's own
memory; ``--db`` names another file. Its key is resolved like the owner's store
key, under its own keyring entry (the entry is per file). Nothing here may
write to stdout: under ``mama mcp`` stdout is the protocol.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from app.admin.copies import follow_purges
from app.durable.journal import reply_observations
from app.local.chain_anchor import StoreAnchors, held_data_marks
from app.local.keys import resolve_key
from app.local.paths import Paths
from app.local.settings import Settings
from mama_core.memory import Engine, EngineConfig
from mama_core.store import DbKey, Store

DEV_MEMORY_FILE_NAME = "dev-memory.db"


def dev_memory_path(paths: Paths, db: Path | None = None) -> Path:
    """``db`` if given, else ``<data folder>/dev-memory.db``."""
    return (db if db is not None else paths.home / DEV_MEMORY_FILE_NAME).expanduser().absolute()


def dev_memory_key(db_path: Path) -> DbKey:
    """The store key: ``MAMA_DB_KEY`` or the keyring entry for this file (never a prompt:
    a stdio server and a hook have no terminal to ask in)."""
    return resolve_key(db_path, ask_passphrase=None).key


@contextlib.contextmanager
def open_engine(db_path: Path, paths: Paths) -> Iterator[Engine]:
    """Open (creating if needed) the store at ``db_path`` and an engine over it."""
    from mama_core.embeddings import load_embedder

    settings = Settings.load(paths.settings)
    marks = held_data_marks(db_path, paths.config)
    store = Store.open(db_path, dev_memory_key(db_path), held_data_marks=marks)
    try:
        embedder = load_embedder(
            settings.embedding_model_path, paths.cache, builtin=settings.embedding_model
        )
        engine = Engine(
            store,
            embedder,
            EngineConfig(tombstone_threshold=settings.tombstone_threshold),
            StoreAnchors(db_path, paths.config, store.store_id),
            replies=reply_observations,
        )
        follow_purges(engine, paths.home)
        try:
            yield engine
        finally:
            engine.close()
    finally:
        store.close()
