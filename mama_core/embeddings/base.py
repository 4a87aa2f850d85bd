"""What recall needs from an embedding model, independent of how it runs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors.

    ``model_id`` is stored beside every vector so that vectors from a different
    model (or a differently converted one) are never compared with each other.
    """

    @property
    def model_id(self) -> str:
        """Stable id of the model and its conversion."""
        ...

    @property
    def dim(self) -> int:
        """Length of every vector this embedder returns."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """An (n, dim) float32 array, one L2-normalised row per text, in order."""
        ...

    def embed_one(self, text: str) -> np.ndarray:
        """One (dim,) float32 unit vector."""
        ...


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length in float32; an all-zero row stays zero, never NaN."""
    out = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.maximum(norms, np.float32(1e-12))
