"""What recall needs from an embedding model, independent of how it runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True)
class ScoreScale:
    """Where a model's cosines mean "related at all" and "says the same thing".

    Each model spreads cosine over its own range: MiniLM puts unrelated texts near 0
    and paraphrases above 0.9, e5 puts almost any two texts above 0.7 (its training
    temperature packs them together). The numbers that compare a cosine with a fixed
    value — recall's vector floor, the tombstone threshold — belong to the model, not
    to recall or the engine, so switching models never leaves a threshold tuned for
    the other one's scale.
    """

    relevance_floor: float
    """The vector arm drops rows below this cosine: an unrelated query finds nothing."""
    duplicate_threshold: float
    """At or above this cosine a save may be a tombstoned text reworded (the words then
    decide, ``tombstone_match``)."""
    swap_same_meaning: float = 0.0
    """A save that swaps one run of a tombstoned sentence's words is let through as
    another fact below this cosine (0: never, the cosine alone decides); at or above
    it the swap was a synonym."""
    restatement_threshold: float = 0.96
    """At or above this cosine a save may restate a live memory in the same scopes (the
    words then decide, ``restatements``): the best recall at precision >= 0.95 on the
    dev split of ``python -m bench.duplicates`` (a merge loses what the owner said, a
    miss only shows twice, so precision comes first)."""


MINILM_SCALE = ScoreScale(
    relevance_floor=0.15, duplicate_threshold=0.92, restatement_threshold=0.96
)
"""all-MiniLM-L6-v2's, tuned on the dev sets and the labelled tombstone pairs."""

SCORE_SCALES: dict[str, ScoreScale] = {
    "all-MiniLM-L6-v2": MINILM_SCALE,
    "multilingual-e5-small": ScoreScale(
        relevance_floor=0.76,
        duplicate_threshold=0.86,
        swap_same_meaning=0.99,
        restatement_threshold=0.93,
    ),
}
"""Known models by their GGUF ``general.name``. A model not listed gets MiniLM's scale
(a configured GGUF of another family: set its thresholds explicitly if they differ)."""


def score_scale(embedder: object) -> ScoreScale:
    """The embedder's ``score_scale`` if it has one, else MiniLM's."""
    scale = getattr(embedder, "score_scale", None)
    return scale if isinstance(scale, ScoreScale) else MINILM_SCALE
