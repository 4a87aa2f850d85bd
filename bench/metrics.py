"""Retrieval metrics, as the LoCoMo and LongMemEval papers define them."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence


def evidence_recall(ranked: Sequence[str], evidence: Collection[str], k: int) -> float:
    """LoCoMo: the share of the evidence ids found among the top ``k``."""
    wanted = set(evidence)
    if not wanted:
        return 0.0
    return len(wanted & set(ranked[:k])) / len(wanted)


def reciprocal_rank(ranked: Sequence[str], evidence: Collection[str]) -> float:
    """1 / rank of the first evidence id in ``ranked`` (0 when none is there)."""
    wanted = set(evidence)
    for rank, key in enumerate(ranked, start=1):
        if key in wanted:
            return 1.0 / rank
    return 0.0


def recall_all(ranked: Sequence[str], evidence: Collection[str], k: int) -> float:
    """LongMemEval: 1 if every evidence id is in the top ``k``, else 0."""
    top = set(ranked[:k])
    return float(all(e in top for e in evidence))


def recall_any(ranked: Sequence[str], evidence: Collection[str], k: int) -> float:
    """LongMemEval: 1 if some evidence id is in the top ``k``, else 0."""
    top = set(ranked[:k])
    return float(any(e in top for e in evidence))


def _dcg(relevances: Sequence[float], k: int) -> float:
    # LongMemEval's own formula: the first two positions are both undiscounted.
    rel = list(relevances[:k])
    if not rel:
        return 0.0
    return rel[0] + sum(r / math.log2(i) for i, r in enumerate(rel[1:], start=2))


def ndcg_any(ranked: Sequence[str], evidence: Collection[str], k: int) -> float:
    """LongMemEval's ndcg_any@k with binary relevance (as in its eval_utils.py)."""
    wanted = set(evidence)
    actual = _dcg([1.0 if key in wanted else 0.0 for key in ranked[:k]], k)
    ideal = _dcg([1.0] * len(wanted), k)
    return 0.0 if ideal == 0 else actual / ideal


def dedupe(keys: Sequence[str]) -> list[str]:
    """Keys in order of first appearance (turn ranking → session ranking)."""
    return list(dict.fromkeys(keys))


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
