"""Append latency and import rate of the engine's one writer, against a floor.

    python -m bench.write [--sizes 1000 10000 100000] [--appends 300] [--with-model]
                          [--json OUT]

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
  (each size holds a few hundred rows more than its label);
- the floor: a bare SQLCipher ``INSERT`` + ``COMMIT`` of the same bytes (the
  save's JSON and its vector) into a one-table store beside it, opened by the
  same connection factory (same key kind, same PRAGMAs, ``synchronous=FULL``).
  Each append is timed right after its floor insert, so both see the same
  machine; the last line's ``floor_ratio`` is append p50 (embedding excluded)
  over floor p50 at the largest size;
- the secret scan's share: the scan every save runs (``refuse_secrets``) timed
  alone on the same payloads (it is inside the append figures);
- ``--with-model``: the same appends again with the real GGUF model embedding
  inside the append (``with model``), and the model's time alone per text.
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
from mama_core.embeddings import PASSAGE, load_embedder
from mama_core.memory.secrets_scan import refuse_secrets
from mama_core.store import DbKey
from mama_core.store.connection import connect


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def p50_p95(values: list[float]) -> tuple[float, float]:
    if len(values) < 2:
        return (values[0], values[0]) if values else (0.0, 0.0)
    return statistics.median(values), statistics.quantiles(values, n=100)[94]


class Floor:
    """A bare encrypted store beside the bench's: one ``INSERT`` + ``COMMIT`` per row,
    through the store's own connection factory (key, WAL, ``synchronous=FULL``)."""

    def __init__(self, path: Path) -> None:
        self.conn = connect(path, DbKey.generate())
        self.conn.execute("CREATE TABLE IF NOT EXISTS floor (id INTEGER PRIMARY KEY, body BLOB)")

    def insert(self, body: bytes) -> float:
        """Milliseconds to insert and commit ``body``."""
        began = time.perf_counter()
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.execute("INSERT INTO floor (body) VALUES (?)", (body,))
        self.conn.execute("COMMIT")
        return (time.perf_counter() - began) * 1000

    def close(self) -> None:
        self.conn.close()


def floor_bytes(payload: dict[str, Any], lookup: LookupEmbedder) -> bytes:
    """What a save stores at the least: its JSON and its vector."""
    vector = lookup.embed_one(str(payload["summary"]))
    return json.dumps(payload, sort_keys=True).encode("utf-8") + vector.astype("<f4").tobytes()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.write", description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--appends", type=int, default=300)
    parser.add_argument("--batch", type=int, default=500, help="saves per bulk transaction")
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--model-cache", type=Path, default=None, help="GGUF model cache folder")
    parser.add_argument(
        "--with-model",
        action="store_true",
        help="also measure appends with the real model embedding inside them",
    )
    parser.add_argument("--json", type=Path, dest="json_out")
    args = parser.parse_args(argv)

    model_cache = args.model_cache or Path(platformdirs.user_cache_dir("mama")) / "models"
    model = load_embedder(None, model_cache)
    corpus = Corpus.load(args.corpus)
    lookup = LookupEmbedder(model.model_id, model.dim)
    grow = GrowingStore(corpus, lookup)
    floor = Floor(grow.path.with_name("floor.db"))
    sync = grow.store.conn.execute("PRAGMA synchronous").fetchone()[0]
    print(f"model id: {model.model_id} (vectors synthetic: embedding is excluded)")
    sync_name = {0: "OFF", 1: "NORMAL", 2: "FULL"}.get(sync, str(sync))
    print(f"texts: {corpus.source}; synchronous={sync_name}")
    header = (
        f"{'stored':>8} {'bulk/s':>9} {'single/s':>9} {'append p50':>11} {'p95':>7} "
        f"{'excl. lookup p50':>17} {'p95':>7} {'floor p50':>10} {'p95':>7} {'ratio':>6} "
        f"{'scan p50':>9} {'RSS MB':>7}"
    )
    print(header)
    print("-" * len(header))
    results: list[dict[str, Any]] = []
    serial = 10_000_000
    for size in sorted(args.sizes):
        rate = grow.grow_to(size, lambda d, t: log(f"  saved {d}/{t}"), batch=args.batch)
        wall: list[float] = []
        net: list[float] = []
        floors: list[float] = []
        scans: list[float] = []
        for _ in range(args.appends):
            serial += 1
            payload = grow.payload(serial)
            floors.append(floor.insert(floor_bytes(payload, lookup)))
            lookup_before = lookup.seconds
            began = time.perf_counter()
            grow.engine.dispatch("memory.save", payload, grow.session, grow.grant)
            elapsed = time.perf_counter() - began
            wall.append(elapsed * 1000)
            net.append((elapsed - (lookup.seconds - lookup_before)) * 1000)
            began = time.perf_counter()
            refuse_secrets(payload)
            scans.append((time.perf_counter() - began) * 1000)
        w50, w95 = p50_p95(wall)
        n50, n95 = p50_p95(net)
        f50, f95 = p50_p95(floors)
        s50, _ = p50_p95(scans)
        row: dict[str, Any] = {
            "stored": size,
            "import_per_s": rate,
            "single_per_s": 1000 * len(wall) / sum(wall),
            "append_ms": {"p50": w50, "p95": w95},
            "append_excl_embedding_ms": {"p50": n50, "p95": n95},
            "floor_ms": {"p50": f50, "p95": f95},
            "floor_ratio": n50 / f50,
            "secret_scan_ms": {"p50": s50},
            "rss_mb": rss_mb(),
        }
        print(
            f"{size:>8} {rate:>9.0f} {row['single_per_s']:>9.0f} {w50:>11.2f} {w95:>7.2f} "
            f"{n50:>17.2f} {n95:>7.2f} {f50:>10.2f} {f95:>7.2f} {n50 / f50:>6.2f} "
            f"{s50:>9.2f} {rss_mb():>7.0f}"
        )
        if args.with_model:
            row.update(_with_model(grow, lookup, model, serial, args.appends))
            serial += args.appends
            print(
                f"{'':>8} with model: append p50 {row['append_with_model_ms']['p50']:.2f} "
                f"p95 {row['append_with_model_ms']['p95']:.2f}; "
                f"the model alone p50 {row['embed_ms']['p50']:.2f} per text"
            )
        results.append(row)
    total_rate = grow.size / grow.import_seconds if grow.import_seconds else 0.0
    floor.close()
    grow.close()
    last = results[-1]
    print(f"refused during import: {grow.refused}")
    if args.json_out is not None:
        args.json_out.write_text(json.dumps({"results": results}, indent=1), encoding="utf-8")
    print(
        f"append_p50_ms@{last['stored'] // 1000}k={last['append_excl_embedding_ms']['p50']:.2f} "
        f"append_p95_ms={last['append_excl_embedding_ms']['p95']:.2f} "
        f"import_per_s={total_rate:.0f} floor_p50_ms={last['floor_ms']['p50']:.2f} "
        f"floor_ratio={last['floor_ratio']:.2f}"
    )
    return 0


def _with_model(
    grow: GrowingStore, lookup: LookupEmbedder, model: Any, serial: int, appends: int
) -> dict[str, Any]:
    """Appends whose vector the real model computes inside the measured call."""
    wall: list[float] = []
    alone: list[float] = []
    lookup.live = model
    try:
        for i in range(appends):
            payload = grow.payload(serial + 1 + i)
            began = time.perf_counter()
            grow.engine.dispatch("memory.save", payload, grow.session, grow.grant)
            wall.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            model.embed_one(str(payload["summary"]), PASSAGE)
            alone.append((time.perf_counter() - began) * 1000)
    finally:
        lookup.live = None
    w50, w95 = p50_p95(wall)
    e50, e95 = p50_p95(alone)
    return {
        "append_with_model_ms": {"p50": w50, "p95": w95},
        "embed_ms": {"p50": e50, "p95": e95},
    }


if __name__ == "__main__":
    raise SystemExit(main())
