"""A plain BM25 baseline, measured in the same run as recall.

Okapi BM25 (k1 = 1.5, b = 0.75, negative idf floored at 0.25 * mean idf) over
lowercase alphanumeric tokens, with no stopwords and no stemming: the formula
and defaults of ``rank_bm25.BM25Okapi``, which the reference figures in
``../shared/bench/README.md`` used. It runs in memory over the same memory
texts and only anchors the harness (if this row matches the published BM25
figure, the loaders and metrics are right); it is not part of MAMA.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


class PlainBM25:
    """BM25Okapi over a fixed list of documents."""

    def __init__(
        self, documents: Sequence[str], k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25
    ) -> None:
        self.k1, self.b = k1, b
        self.docs = [Counter(tokenize(d)) for d in documents]
        self.lengths = [sum(c.values()) for c in self.docs]
        n = len(self.docs)
        self.avgdl = (sum(self.lengths) / n) if n else 0.0
        df: Counter[str] = Counter()
        for counts in self.docs:
            df.update(counts.keys())
        idf = {w: math.log(n - f + 0.5) - math.log(f + 0.5) for w, f in df.items()}
        floor = epsilon * (sum(idf.values()) / len(idf)) if idf else 0.0
        self.idf = {w: (v if v >= 0 else floor) for w, v in idf.items()}

    def scores(self, query: str) -> list[float]:
        terms = tokenize(query)
        out: list[float] = []
        for counts, length in zip(self.docs, self.lengths, strict=True):
            norm = self.k1 * (1 - self.b + self.b * length / self.avgdl) if self.avgdl else self.k1
            s = 0.0
            for t in terms:
                tf = counts.get(t, 0)
                if tf:
                    s += self.idf.get(t, 0.0) * tf * (self.k1 + 1) / (tf + norm)
            out.append(s)
        return out

    def rank(self, query: str, limit: int) -> list[int]:
        """Document indexes, best first (ties by lower index, as a stable sort gives)."""
        scores = self.scores(query)
        order = sorted(range(len(scores)), key=lambda i: -scores[i])
        return order[:limit]
