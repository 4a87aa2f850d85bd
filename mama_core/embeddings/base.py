"""What recall needs from an embedding model, independent of how it runs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

import numpy as np

Role = Literal["query", "passage"]
"""What a text is to the model: a question searched with (``query``) or text stored to be
found (``passage``). Models trained with instructions (e5: ``query: `` / ``passage: ``)
embed the two differently; models without (MiniLM) the same way. Stored vectors, the
vector cache and ``model_id`` are always passages; a query vector is never stored, and
tombstone and near-duplicate matching compare passages with passages."""

QUERY: Role = "query"
PASSAGE: Role = "passage"
ROLES: tuple[Role, ...] = (QUERY, PASSAGE)


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors, as queries or as passages.

    ``model_id`` is stored beside every (passage) vector so that vectors from a
    different model (or a differently converted one) are never compared with each other.
    """

    @property
    def model_id(self) -> str:
        """Stable id of the model and its conversion."""
        ...

    @property
    def dim(self) -> int:
        """Length of every vector this embedder returns."""
        ...

    def embed(self, texts: Sequence[str], role: Role = PASSAGE) -> np.ndarray:
        """An (n, dim) float32 array, one L2-normalised row per text, in order."""
        ...

    def embed_one(self, text: str, role: Role = PASSAGE) -> np.ndarray:
        """One (dim,) float32 unit vector."""
        ...


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length in float32; an all-zero row stays zero, never NaN."""
    out = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.maximum(norms, np.float32(1e-12))
