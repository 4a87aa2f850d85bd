"""Recall latency at 1k, 10k and 100k judgments, beside the bare numpy floor.

    python -m bench.recall_speed [--sizes 1000 10000 100000] [--queries 200] [--json OUT]
        [--stages episode prf when]

One temporary encrypted store grows through the real engine (``bench.bigstore``)
to each size; the vector cache follows the engine's change-sets as in the app.
Texts are realistic (``bench.corpus``); vectors are the real GGUF model's for the
first 10,000 texts and synthetic (seeded random unit vectors) beyond, which
changes nothing in the cost of an exact scan. At each size, for the questions of
the public sets:

- recall p50/p95 with the query vector given (embedding excluded), for the
  default preset with the owner's scopes (every row is a candidate: the worst
  case), the BM25-only and vector-only presets, each opt-in stage's preset
  (``--stages``: episode, prf, when by default; the added cost is the preset's
  p50 minus the default's), and an agent bound to one project;
- the floor: a bare numpy top-k (product, ``argpartition``, sort) over the very
  same float32 matrix, in the same run, the faster of BLAS ``M @ q`` and
  ``einsum`` (both are in the JSON);
- the query embedding itself (real model), separately;
- resident memory and the cache's own bytes.

Ends with ``recall_p50_ms@100k=… floor_ms@100k=… ratio=…``.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import platformdirs

from bench.bigstore import GrowingStore, LookupEmbedder
from bench.corpus import Corpus
from bench.embedding_cache import CachedEmbedder
from bench.memory_use import rss_mb
from mama_core.embeddings import QUERY, load_embedder
from mama_core.recall import PRESETS, Recall, RecallQuery, VectorCache

LIMIT = 10
WARMUP = 10


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def percentiles(samples: list[float]) -> tuple[float, float]:
    """(p50, p95) in the samples' unit."""
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return statistics.median(samples), cuts[94]


def timed(fn: Callable[[int], object], n: int) -> list[float]:
    """Milliseconds per call of ``fn(i)`` for i in range(n), after a warm-up."""
    for i in range(min(WARMUP, n)):
        fn(i)
    gc.collect()
    out: list[float] = []
    for i in range(n):
        began = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - began) * 1000)
    return out


def floor_top_k(matrix: np.ndarray, query: np.ndarray, k: int, blas: bool) -> np.ndarray:
    """The bare numpy top-k: one matrix-vector product, a partition, a sort.

    Measured both ways numpy offers the product (BLAS ``@`` and ``einsum``);
    the faster of the two is the floor, so the ratio is never flattered.
    """
    scores = matrix @ query if blas else np.einsum("ij,j->i", matrix, query)
    top = np.argpartition(-scores, k)[:k]
    return top[np.argsort(-scores[top])]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.recall_speed", description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--real-vectors", type=int, default=10_000)
    parser.add_argument("--corpus", type=Path, default=None, help="folder of the public sets")
    parser.add_argument("--json", type=Path, dest="json_out")
    parser.add_argument("--stages", nargs="*", default=["episode", "prf", "when"])
    args = parser.parse_args(argv)
    sizes = sorted(args.sizes)

    model = load_embedder(None, Path(platformdirs.user_cache_dir("mama")) / "models")
    corpus = Corpus.load(args.corpus)
    log(f"corpus: {len(corpus.texts)} texts, {len(corpus.questions)} questions ({corpus.source})")

    cached = CachedEmbedder(model)
    real_texts = [corpus.text(i) for i in range(min(args.real_vectors, sizes[-1]))]
    log(f"real vectors for {len(real_texts)} texts (cached by content hash)")
    cached.prefetch(real_texts, lambda d, t: log(f"  embedded {d}/{t}") if d % 1024 == 0 else None)
    known = dict(zip(real_texts, cached.embed(real_texts), strict=True))
    cached.close()
    lookup = LookupEmbedder(model.model_id, model.dim, known)

    questions = random.Random(11).sample(corpus.questions, min(args.queries, len(corpus.questions)))
    embed_ms = timed(lambda i: model.embed_one(questions[i], QUERY), len(questions))
    vectors = list(model.embed(questions, QUERY))

    grow = GrowingStore(corpus, lookup)
    cache_conn = grow.store.new_connection()
    cache = VectorCache(model.model_id, model.dim)
    grow.engine.subscribe(lambda changes: cache.apply_changeset(cache_conn, changes))
    recall = Recall(grow.store.new_connection, model, cache)

    results: list[dict[str, Any]] = []
    print(f"model: {model.model_id}  fusion: {PRESETS['default'].fusion_version}")
    print(f"texts: {corpus.source}")
    print(f"vectors: real for the first {len(real_texts)} texts, synthetic beyond")
    print(
        f"query embedding (real model, excluded below): p50 {percentiles(embed_ms)[0]:.2f} ms "
        f"p95 {percentiles(embed_ms)[1]:.2f} ms"
    )
    header = (
        f"{'rows':>8} {'recall p50':>11} {'p95':>7} {'bm25 p50':>9} {'vector p50':>11} "
        f"{'agent p50':>10} {'floor p50':>10} {'p95':>7} {'ratio':>6} {'cache MB':>9} {'RSS MB':>7}"
    )
    print(header)
    print("-" * len(header))
    for size in sizes:
        rate = grow.grow_to(size, lambda d, t: log(f"  saved {d}/{t}"))
        scopes = [str(r[0]) for r in cache_conn.execute("SELECT name FROM scopes").fetchall()]

        def run(config_name: str, readable: list[str]) -> list[float]:
            config = PRESETS[config_name]

            def one(i: int) -> object:
                query = RecallQuery(questions[i], scopes=readable, limit=LIMIT)
                return recall.search(query, query_vector=vectors[i], config=config)

            return timed(one, len(questions))

        fused = run("default", scopes)
        bm25 = run("bm25_only", scopes)
        vector = run("vector_only", scopes)
        stages = {name: run(name, scopes) for name in args.stages}
        agent = run("default", ["project:web"])
        _, matrix = cache.matrix()
        floor_blas = timed(
            lambda i, m=matrix: floor_top_k(m, vectors[i], LIMIT, True), len(questions)
        )
        floor_einsum = timed(
            lambda i, m=matrix: floor_top_k(m, vectors[i], LIMIT, False), len(questions)
        )
        floor = min(floor_blas, floor_einsum, key=statistics.median)
        f50, f95 = percentiles(fused)
        fl50, fl95 = percentiles(floor)
        row = {
            "rows": size,
            "import_rate_per_s": rate,
            "recall_ms": {"p50": f50, "p95": f95},
            "bm25_only_ms": dict(zip(("p50", "p95"), percentiles(bm25), strict=True)),
            "vector_only_ms": dict(zip(("p50", "p95"), percentiles(vector), strict=True)),
            "stages_ms": {
                name: dict(zip(("p50", "p95"), percentiles(samples), strict=True))
                for name, samples in stages.items()
            },
            "agent_one_project_ms": dict(zip(("p50", "p95"), percentiles(agent), strict=True)),
            "floor_ms": {"p50": fl50, "p95": fl95},
            "floor_blas_ms": dict(zip(("p50", "p95"), percentiles(floor_blas), strict=True)),
            "floor_einsum_ms": dict(zip(("p50", "p95"), percentiles(floor_einsum), strict=True)),
            "ratio_p50": f50 / fl50 if fl50 else float("inf"),
            "cache_mb": cache.nbytes / 2**20,
            "rss_mb": rss_mb(),
        }
        results.append(row)
        print(
            f"{size:>8} {f50:>11.2f} {f95:>7.2f} {percentiles(bm25)[0]:>9.2f} "
            f"{percentiles(vector)[0]:>11.2f} {percentiles(agent)[0]:>10.2f} {fl50:>10.2f} "
            f"{fl95:>7.2f} {row['ratio_p50']:>6.2f} {row['cache_mb']:>9.1f} {row['rss_mb']:>7.0f}"
        )
        for name, samples in stages.items():
            s50 = percentiles(samples)[0]
            print(
                f"{'':>8} preset {name} ({PRESETS[name].fusion_version.split(' script-v1 ')[-1]}) "
                f"p50 {s50:.2f} ms (+{s50 - f50:.2f} over default)"
            )
    recall.close()
    cache_conn.close()
    grow.close()
    rate = grow.size / grow.import_seconds if grow.import_seconds else 0.0
    print(
        f"(stores built through Engine.dispatch at {rate:.0f} saves/s; "
        f"refused {grow.refused}; synthetic vectors {lookup.synthetic})"
    )
    last = results[-1]
    label = f"{last['rows'] // 1000}k" if last["rows"] % 1000 == 0 else str(last["rows"])
    print(
        f"recall_p50_ms@{label}={last['recall_ms']['p50']:.2f} "
        f"floor_ms@{label}={last['floor_ms']['p50']:.2f} ratio={last['ratio_p50']:.2f}"
    )
    if args.json_out is not None:
        args.json_out.write_text(json.dumps({"results": results}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
