"""Append latency and import rate of the engine's one writer.

    python -m bench.write [--sizes 1000 10000 100000] [--appends 300] [--json OUT]

One temporary encrypted store (``synchronous=FULL``, WAL, SQLCipher) grows
through ``Engine.dispatch("memory.save", …)`` as the owner. Embedding is taken
out of the measurement by giving the engine a lookup embedder (``bench.bigstore``:
precomputed or synthetic vectors under the real model's id); the time the
lookup takes is measured and reported, and is microseconds.

- bulk import rate: judgments per second while growing the store through
  ``Engine.dispatch_batch`` (``--batch`` saves per transaction, each with its
  own event and receipt), embedding excluded; and the one-by-one rate of the
  measured single appends (one transaction each) beside it;
- at each size: p50/p95 of single appends (``dispatch`` wall time), and the
  same minus the lookup embedder's time. The measured appends stay in the store
  (each size holds a few hundred rows more than its label).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import platformdirs

from bench.bigstore import GrowingStore, LookupEmbedder
from bench.corpus import Corpus
from bench.memory_use import rss_mb
from mama_core.embeddings import load_embedder


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.write", description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--appends", type=int, default=300)
    parser.add_argument("--batch", type=int, default=500, help="saves per bulk transaction")
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--json", type=Path, dest="json_out")
    args = parser.parse_args(argv)

    model = load_embedder(None, Path(platformdirs.user_cache_dir("mama")) / "models")
    corpus = Corpus.load(args.corpus)
    lookup = LookupEmbedder(model.model_id, model.dim)
    grow = GrowingStore(corpus, lookup)
    sync = grow.store.conn.execute("PRAGMA synchronous").fetchone()[0]
    print(f"model id: {model.model_id} (vectors synthetic: embedding is excluded)")
    sync_name = {0: "OFF", 1: "NORMAL", 2: "FULL"}.get(sync, str(sync))
    print(f"texts: {corpus.source}; synchronous={sync_name}")
    header = (
        f"{'stored':>8} {'bulk/s':>9} {'single/s':>9} {'append p50':>11} {'p95':>7} "
        f"{'excl. lookup p50':>17} {'p95':>7} {'RSS MB':>7}"
    )
    print(header)
    print("-" * len(header))
    results: list[dict[str, Any]] = []
    for size in sorted(args.sizes):
        rate = grow.grow_to(size, lambda d, t: log(f"  saved {d}/{t}"), batch=args.batch)
        wall: list[float] = []
        net: list[float] = []
        for i in range(args.appends):
            payload = grow.payload(10_000_000 + size + i)
            lookup_before = lookup.seconds
            began = time.perf_counter()
            grow.engine.dispatch("memory.save", payload, grow.session, grow.grant)
            elapsed = time.perf_counter() - began
            wall.append(elapsed * 1000)
            net.append((elapsed - (lookup.seconds - lookup_before)) * 1000)
        w50, w95 = statistics.median(wall), statistics.quantiles(wall, n=100)[94]
        n50, n95 = statistics.median(net), statistics.quantiles(net, n=100)[94]
        results.append(
            {
                "stored": size,
                "import_per_s": rate,
                "single_per_s": 1000 * len(wall) / sum(wall),
                "append_ms": {"p50": w50, "p95": w95},
                "append_excl_embedding_ms": {"p50": n50, "p95": n95},
                "rss_mb": rss_mb(),
            }
        )
        print(
            f"{size:>8} {rate:>9.0f} {1000 * len(wall) / sum(wall):>9.0f} {w50:>11.2f} {w95:>7.2f} "
            f"{n50:>17.2f} {n95:>7.2f} {rss_mb():>7.0f}"
        )
    total_rate = grow.size / grow.import_seconds if grow.import_seconds else 0.0
    grow.close()
    last = results[-1]
    print(f"refused during import: {grow.refused}")
    print(
        f"append_p50_ms@{last['stored'] // 1000}k={last['append_excl_embedding_ms']['p50']:.2f} "
        f"append_p95_ms={last['append_excl_embedding_ms']['p95']:.2f} "
        f"import_per_s={total_rate:.0f}"
    )
    if args.json_out is not None:
        args.json_out.write_text(json.dumps({"results": results}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
