"""Recall: exact hybrid retrieval over the judgments a caller may read.

See ``recall.Recall`` for the pipeline, ``config`` for the presets and the
versioned fusion formula, ``vector_cache`` for the in-memory vectors and
``reembed`` for filling vectors after a model change.
"""

from mama_core.recall.config import (
    FUSION_FORMULA,
    FUSION_VERSION,
    PRESETS,
    Arm,
    RecallConfig,
    preset,
)
from mama_core.recall.predicate import Predicate
from mama_core.recall.query import ArmScore, RecallHit, RecallQuery
from mama_core.recall.recall import Recall
from mama_core.recall.reembed import ReembedResult, count_missing, reembed
from mama_core.recall.vector_cache import VectorCache, VectorMatch

__all__ = [
    "FUSION_FORMULA",
    "FUSION_VERSION",
    "PRESETS",
    "Arm",
    "ArmScore",
    "Predicate",
    "Recall",
    "RecallConfig",
    "RecallHit",
    "RecallQuery",
    "ReembedResult",
    "VectorCache",
    "VectorMatch",
    "count_missing",
    "preset",
    "reembed",
]
