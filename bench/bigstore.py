"""Growing a store to 1k, 10k and 100k judgments through the real engine, fast.

The writer is the real one (``Engine.dispatch("memory.save", …)`` as the
owner); only the embedding is taken out of the loop: ``LookupEmbedder`` returns
vectors computed beforehand — real GGUF vectors where the benchmark embedded
the text, seeded random unit vectors (synthetic) for the rest — under the real
model's id, so the stored rows have exactly the shape the app writes.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.corpus import Corpus
from mama_core.embeddings import PASSAGE, Embedder, Role
from mama_core.memory import Engine, EngineConfig, Grant, SessionFacts
from mama_core.store import DbKey, Store

# A realistic spread: most rows global, the rest in projects, a user and channels.
SCOPE_MIX = ("global",) * 6 + (
    "project:web",
    "project:mobile",
    "project:infra",
    "user:me",
    "channel:slack",
    "channel:gmail",
)


def synthetic_vector(text: str, dim: int) -> np.ndarray:
    """A unit vector seeded by the text: stable across runs, unrelated to its meaning."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    seed = int.from_bytes(digest[:8], "little")
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


class LookupEmbedder:
    """An ``Embedder`` answering from precomputed vectors (synthetic for unknown texts);
    with ``live`` set, the real model answers instead (to measure a save with it)."""

    def __init__(self, model_id: str, dim: int, known: dict[str, np.ndarray] | None = None) -> None:
        self._model_id = model_id
        self._dim = dim
        self.known = dict(known or {})
        self.synthetic = 0
        self.seconds = 0.0
        self.live: Embedder | None = None

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str], role: Role = PASSAGE) -> np.ndarray:
        if self.live is not None:
            return self.live.embed(texts, role)
        # Stored texts only (passages): the known vectors are passage vectors.
        began = time.perf_counter()
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for i, text in enumerate(texts):
            vector = self.known.get(text)
            if vector is None:
                self.synthetic += 1
                vector = synthetic_vector(text, self._dim)
            out[i] = vector
        self.seconds += time.perf_counter() - began
        return out

    def embed_one(self, text: str, role: Role = PASSAGE) -> np.ndarray:
        return self.embed([text], role)[0]


class GrowingStore:
    """A temporary encrypted store that grows, one engine save per judgment."""

    def __init__(
        self, corpus: Corpus, embedder: LookupEmbedder, config: EngineConfig | None = None
    ) -> None:
        self.corpus = corpus
        self.embedder = embedder
        self._dir = Path(tempfile.mkdtemp(prefix="mama-bench-big-"))
        self.path = self._dir / "mama.db"
        self.store = Store.open(self.path, DbKey.generate())
        self.engine = Engine(self.store, embedder, config)
        self.session = SessionFacts.owner_cli()
        self.grant = Grant.owner()
        self.size = 0
        self.import_seconds = 0.0
        self.refused = 0

    def payload(self, i: int) -> dict[str, Any]:
        return {
            "kind": "fact" if i % 5 else "decision",
            "summary": self.corpus.text(i),
            "scopes": [SCOPE_MIX[i % len(SCOPE_MIX)]],
            "valid_from": f"{2020 + (i % 5)}-{1 + i % 12:02d}-{1 + i % 28:02d}T12:00:00Z",
        }

    def grow_to(
        self, n: int, progress: Callable[[int, int], None] | None = None, batch: int = 1
    ) -> float:
        """Save judgments until there are ``n``; returns the rate (saves per second).

        ``batch`` > 1 imports through ``Engine.dispatch_batch`` (that many saves
        per transaction, each still with its own event and receipt).
        """
        from mama_core.errors import MamaError

        start_size, began = self.size, time.perf_counter()
        while self.size < n:
            count = min(batch, n - self.size)
            payloads = [self.payload(self.size + i) for i in range(count)]
            while payloads:
                try:
                    if batch == 1:
                        self.engine.dispatch("memory.save", payloads[0], self.session, self.grant)
                    else:
                        self.engine.dispatch_batch(
                            "memory.save", payloads, self.session, self.grant
                        )
                    break
                except MamaError as exc:
                    # e.g. a turn that looks like a secret: counted and left out.
                    self.refused += 1
                    index = int(exc.details.get("index", 0)) if batch > 1 else 0
                    del payloads[index]
            before = self.size
            self.size += count
            if progress is not None and self.size // 5000 > before // 5000:
                progress(self.size, n)
        elapsed = time.perf_counter() - began
        self.import_seconds += elapsed
        return (self.size - start_size) / elapsed if elapsed else 0.0

    def close(self) -> None:
        self.engine.close()
        self.store.close()
        shutil.rmtree(self._dir, ignore_errors=True)
