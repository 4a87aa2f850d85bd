"""Declarative recall settings: a frozen config, named presets, a versioned fusion formula.

Everything that changes a ranking lives here, so a benchmark row can name exactly
what produced it (``RecallConfig.fusion_version``) and a caller picks a preset by
name instead of passing loose numbers around.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from types import MappingProxyType
from typing import Any

# The formula's name. Bump the version whenever the arithmetic of fusion changes
# (not when a parameter does: parameters are printed beside it).
FUSION_FORMULA = "rrf-v1"


class Arm(StrEnum):
    """A ranked list recall can fuse: words (BM25), trigrams (BM25) or vectors (cosine)."""

    BM25 = "bm25"
    TRIGRAM = "trigram"
    VECTOR = "vector"


@dataclass(frozen=True)
class RecallConfig:
    """How recall ranks.

    ``rrf_k``: the constant of reciprocal rank fusion, ``sum(w / (k + rank))``.
    It is 10, not the 60 of Cormack et al. (2009), which was chosen for fusing
    dozens of TREC runs: with two or three complementary arms a large k favours
    rows that every arm ranks middling, while a small one lets each arm's best
    rows through (close to interleaving the arms). On the development sets k
    from 5 to 15 gives the same figures (a plateau, not a tuned peak).
    ``arm_depth``: how many ranked candidates each arm contributes to fusion.
    ``bm25_weights``: column weights of FTS5's ``bm25()`` for topic, summary, details.
    ``*_weight``: per-arm multipliers in the fusion sum; 0 switches an arm off.
    ``vector_min_score``: the vector arm drops rows below this cosine, so a
    query unrelated to everything returns nothing instead of the nearest noise;
    None (the default) takes the embedding model's own floor
    (``ScoreScale.relevance_floor``), since each model has its own cosine scale.
    ``trigram_fallback``: when the word index finds nothing, try Latin tokens of
    three or more characters as substrings in the trigram index (partial words).
    Boosts are off by default: ``recency_weight`` adds up to that many RRF "rank-1
    units" for recent validity, decaying with ``recency_half_life_days``;
    ``topic_weight`` adds that many units when a query word is in the topic.
    ``episode_weight`` (off by default) switches on the ``episode-v1`` stage
    (``recall.episode``): each of the top ``episode_seeds`` fused hits lends
    ``episode_weight / (k + its rank)`` to the judgments within ``episode_width``
    ids of it that share its event time.
    ``prf_weight`` (off by default) switches on the ``prf-v1`` stage
    (``recall.expansion``): the best ``prf_terms`` words of the top ``prf_docs``
    fused hits search the word index again, as one more arm of that weight;
    ``prf_names_only`` limits the words to capitalised ones (names, places).
    ``when_weight`` (off by default) switches on the ``when-v1`` stage
    (``recall.temporal``): for a query that asks "when", each of the top
    ``when_depth`` hits whose text carries a time expression gains that many
    rank-1 units.
    ``cross_script`` (on by default) switches on the ``script-v1`` stage
    (``recall.scripts``): a word arm abstains on a vector candidate written in
    another script than the query, instead of voting against it.
    """

    name: str = "default"
    rrf_k: int = 10
    arm_depth: int = 100
    bm25_weights: tuple[float, float, float] = (2.0, 1.0, 1.0)
    bm25_weight: float = 1.0
    trigram_weight: float = 1.0
    vector_weight: float = 1.0
    vector_min_score: float | None = None
    trigram_fallback: bool = True
    recency_weight: float = 0.0
    recency_half_life_days: float = 30.0
    topic_weight: float = 0.0
    episode_weight: float = 0.0
    episode_seeds: int = 10
    episode_width: int = 1
    prf_weight: float = 0.0
    prf_docs: int = 3
    prf_terms: int = 5
    prf_names_only: bool = False
    when_weight: float = 0.0
    when_depth: int = 30
    cross_script: bool = True

    def __post_init__(self) -> None:
        if self.rrf_k < 0:
            raise ValueError("rrf_k must be >= 0")
        if self.arm_depth < 1:
            raise ValueError("arm_depth must be >= 1")
        if len(self.bm25_weights) != 3:
            raise ValueError("bm25_weights needs one weight per column: topic, summary, details")
        if self.episode_seeds < 1 or self.episode_width < 1:
            raise ValueError("episode_seeds and episode_width must be >= 1")
        if self.prf_docs < 1 or self.prf_terms < 1 or self.when_depth < 1:
            raise ValueError("prf_docs, prf_terms and when_depth must be >= 1")
        for name in (
            "bm25_weight",
            "trigram_weight",
            "vector_weight",
            "recency_weight",
            "episode_weight",
            "prf_weight",
            "when_weight",
        ):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")
        if self.recency_half_life_days <= 0:
            raise ValueError("recency_half_life_days must be > 0")

    @property
    def lexical_enabled(self) -> bool:
        return self.bm25_weight > 0 or self.trigram_weight > 0

    @property
    def vector_enabled(self) -> bool:
        return self.vector_weight > 0

    @property
    def fusion_version(self) -> str:
        """The formula and every parameter that changes a ranking, as one string."""
        parts = [f"{FUSION_FORMULA} k={self.rrf_k}", f"depth={self.arm_depth}"]
        arms = [
            f"{arm}x{w:g}"
            for arm, w in (
                ("bm25", self.bm25_weight),
                ("trigram", self.trigram_weight),
                ("vector", self.vector_weight),
            )
            if w > 0
        ]
        parts.append("arms=" + "+".join(arms))
        if self.vector_weight > 0:
            if self.vector_min_score is None:
                parts.append("vmin=model")
            elif self.vector_min_score > 0:
                parts.append(f"vmin={self.vector_min_score:g}")
        if self.cross_script and self.vector_weight > 0 and self.lexical_enabled:
            parts.append("script-v1")
        if self.recency_weight > 0:
            parts.append(f"recency={self.recency_weight:g}/{self.recency_half_life_days:g}d")
        if self.topic_weight > 0:
            parts.append(f"topic={self.topic_weight:g}")
        if self.episode_weight > 0:
            parts.append(
                f"episode-v1={self.episode_weight:g}"
                f"/seeds={self.episode_seeds}/width={self.episode_width}"
            )
        if self.prf_weight > 0:
            parts.append(
                f"prf-v1={self.prf_weight:g}/docs={self.prf_docs}/terms={self.prf_terms}"
                + ("/names" if self.prf_names_only else "")
            )
        if self.when_weight > 0:
            parts.append(f"when-v1={self.when_weight:g}/depth={self.when_depth}")
        return " ".join(parts)

    def with_changes(self, **changes: Any) -> RecallConfig:
        """A copy with some fields changed (the config itself never changes)."""
        return replace(self, **changes)


FUSION_VERSION = RecallConfig().fusion_version

PRESETS: MappingProxyType[str, RecallConfig] = MappingProxyType(
    {
        "default": RecallConfig(),
        "bm25_only": RecallConfig(name="bm25_only", vector_weight=0.0),
        "vector_only": RecallConfig(name="vector_only", bm25_weight=0.0, trigram_weight=0.0),
        "recent": RecallConfig(name="recent", recency_weight=1.0),
        "episode": RecallConfig(name="episode", episode_weight=0.5),
        "prf": RecallConfig(name="prf", prf_weight=0.5),
        "names": RecallConfig(name="names", prf_weight=0.5, prf_names_only=True),
        "when": RecallConfig(name="when", when_weight=1.0),
    }
)


def preset(name: str) -> RecallConfig:
    """The named preset, or a ``KeyError`` listing the names there are."""
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(f"no recall preset {name!r}; known: {', '.join(sorted(PRESETS))}") from None
