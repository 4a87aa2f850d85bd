"""Opening the memory for the desktop app: the store, the embedding model, the engine.

``open_memory`` is plain blocking code meant for a worker thread (the UI
awaits it with ``asyncio.to_thread``), so the tray stays alive while SQLCipher
derives a key or the model is built. No Qt here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.admin.copies import follow_purges
from app.local.chain_anchor import StoreAnchors
from app.local.keys import AskPassphrase, KeyOrigin, ResolvedKey, forget_keyring_key, resolve_key
from app.local.paths import Paths
from app.local.settings import Settings

if TYPE_CHECKING:
    from mama_core.embeddings import GgufEmbedder
    from mama_core.memory import Engine
    from mama_core.store import Store

log = logging.getLogger(__name__)

Progress = Callable[[int, int, str], None]
"""``progress(done, total, what)`` while the model is built the first time."""


@dataclass
class OpenMemory:
    """What the desktop app holds open while it runs."""

    paths: Paths
    settings: Settings
    key: ResolvedKey
    store: Store
    embedder: GgufEmbedder
    engine: Engine

    def close(self) -> None:
        """Finish queued writes, fold the WAL into the file and close the store, then free
        the model: in that order and on purpose, never left to the garbage collector."""
        self.engine.close()
        checkpoint(self.store)
        self.store.close()
        self.embedder.close()


def checkpoint(store: Store) -> None:
    """Copy the WAL into the database file and truncate it (a clean file to back up)."""
    from mama_core.store import sqlcipher

    try:
        store.checkpoint_wal()
    except sqlcipher.Error as exc:  # another process reading: SQLite finishes it later
        log.info("WAL not checkpointed at close: %s", exc)


def discard_new_store(memory: OpenMemory) -> None:
    """Close a store the first-run wizard has just made and remove it (and a keyring key
    made for it), so the next attempt makes it with what the owner chooses now."""
    memory.close()
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{memory.paths.db}{suffix}").unlink(missing_ok=True)
    if memory.key.origin is KeyOrigin.KEYRING:
        forget_keyring_key(memory.paths.db)
    log.info("first run: discarded the new store %s", memory.paths.db)


def is_first_run(paths: Paths) -> bool:
    """No store yet in the data folder: the wizard creates one."""
    return not (paths.db.exists() and paths.db.stat().st_size > 0)


def find_key(paths: Paths, ask: AskPassphrase | None = None) -> ResolvedKey:
    """The store's key (env, keyring, or ``ask``); ``KeyUnavailableError`` if none."""
    return resolve_key(paths.db, ask)


def open_memory(
    paths: Paths,
    settings: Settings,
    key: ResolvedKey,
    progress: Progress | None = None,
) -> OpenMemory:
    """Open (or create) the store, load the embedding model and start the engine."""
    from app.durable.journal import reply_observations
    from app.local.chain_anchor import held_data_marks
    from mama_core.embeddings import load_embedder
    from mama_core.memory import Engine, EngineConfig
    from mama_core.store import Store

    store = Store.open(paths.db, key.key, held_data_marks=held_data_marks(paths.db, paths.config))
    try:
        embedder = load_embedder(
            settings.embedding_model_path, paths.cache, progress, builtin=settings.embedding_model
        )
        # The tray runs all day and searches now and then: it holds the model only while
        # in use (multilingual-e5-small's vocabulary alone costs llama.cpp ~120 MB).
        embedder.idle_release_s = MODEL_IDLE_RELEASE_S
        engine = Engine(
            store,
            embedder,
            EngineConfig(tombstone_threshold=settings.tombstone_threshold),
            StoreAnchors(paths.db, paths.config, store.store_id),
            replies=reply_observations,
        )
        follow_purges(engine, paths.home)
    except BaseException:
        store.close()
        raise
    log.info("memory open: %s (key from %s, model %s)", paths.db, key.describe(), embedder.model_id)
    return OpenMemory(paths, settings, key, store, embedder, engine)


MODEL_IDLE_RELEASE_S = 300.0
"""Seconds without a search or a save after which the tray frees the embedding model;
the next one loads it again (a fraction of a second from the page cache)."""


def warm_up(memory: OpenMemory) -> None:
    """Load the model into memory now, so the first search does not pay for it."""
    from mama_core.embeddings import QUERY

    memory.embedder.embed_one("warm-up", QUERY)  # what the first search needs
