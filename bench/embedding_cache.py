"""Embeddings cached by content hash, so benchmark reruns skip the model.

``CachedEmbedder`` wraps the real embedder and keeps each vector under
``sha256(model_id, text)`` in a small SQLite file in the user cache
(``~/.cache/mama/bench-embeddings/`` unless ``MAMA_BENCH_CACHE`` says otherwise).
A cached vector is the one the model produced for that exact text, so results
are the same as without the cache; only the time differs, and the time spent
embedding is counted separately.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import platformdirs

from mama_core.embeddings.base import PASSAGE, Embedder, Role

Progress = Callable[[int, int], None]


def default_cache_dir() -> Path:
    """Where benchmark vectors are kept between runs."""
    env = os.environ.get("MAMA_BENCH_CACHE")
    if env:
        return Path(env)
    return Path(platformdirs.user_cache_dir("mama")) / "bench-embeddings"


class CachedEmbedder:
    """An ``Embedder`` that looks each text up before asking the wrapped model."""

    def __init__(self, inner: Embedder, cache_dir: Path | None = None) -> None:
        self.inner = inner
        folder = cache_dir or default_cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in inner.model_id)
        self.path = folder / f"{safe}.sqlite"
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)"
        )
        self._lock = threading.Lock()
        self._model_id = inner.model_id
        self._dim = inner.dim
        self.hits = 0
        self.misses = 0
        self.embed_seconds = 0.0

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self._dim

    def _key(self, text: str, role: Role = PASSAGE) -> str:
        # A query vector is never a passage's: queries are keyed apart (passage keys are
        # as they always were, so existing caches stay valid).
        digest = hashlib.sha256(self._model_id.encode())
        if role != PASSAGE:
            digest.update(b"\0" + role.encode())
        digest.update(b"\0")
        digest.update(text.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def _lookup(self, keys: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            rows = self._db.execute(
                f"SELECT key, vector FROM vectors WHERE key IN ({', '.join('?' * len(chunk))})",
                chunk,
            ).fetchall()
            for key, blob in rows:
                found[key] = np.frombuffer(blob, dtype="<f4").copy()
        return found

    def all_cached(self, texts: Sequence[str], role: Role = PASSAGE) -> bool:
        """Whether every text already has a cached vector (nothing to embed)."""
        with self._lock:
            keys = list(dict.fromkeys(self._key(t, role) for t in texts))
            return len(self._lookup(keys)) == len(keys)

    def embed(self, texts: Sequence[str], role: Role = PASSAGE) -> np.ndarray:
        """Vectors for ``texts``, from the cache where possible."""
        return self._embed(list(texts), None, 64, role)

    def embed_one(self, text: str, role: Role = PASSAGE) -> np.ndarray:
        return self.embed([text], role)[0]

    def prefetch(
        self,
        texts: Sequence[str],
        progress: Progress | None = None,
        batch: int = 64,
        role: Role = PASSAGE,
    ) -> None:
        """Make sure every text is cached, embedding the missing ones in batches."""
        unique = list(dict.fromkeys(texts))
        self._embed(unique, progress, batch, role)

    def _embed(
        self, texts: list[str], progress: Progress | None, batch: int, role: Role
    ) -> np.ndarray:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        if not texts:
            return out
        with self._lock:
            keys = [self._key(t, role) for t in texts]
            found = self._lookup(list(dict.fromkeys(keys)))
            pairs = zip(texts, keys, strict=True)
            missing = list(dict.fromkeys(t for t, k in pairs if k not in found))
            self.hits += len(texts) - sum(1 for k in keys if k not in found)
            self.misses += len(missing)
            for start in range(0, len(missing), batch):
                chunk = missing[start : start + batch]
                began = time.perf_counter()
                vectors = np.asarray(self.inner.embed(chunk, role), dtype=np.float32)
                self.embed_seconds += time.perf_counter() - began
                rows = [
                    (self._key(t, role), vectors[i].astype("<f4").tobytes())
                    for i, t in enumerate(chunk)
                ]
                self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)
                for (key, _), vector in zip(rows, vectors, strict=True):
                    found[key] = vector
                if progress is not None:
                    progress(min(start + batch, len(missing)), len(missing))
            for i, key in enumerate(keys):
                out[i] = found[key]
        return out

    def close(self) -> None:
        with self._lock:
            self._db.close()
