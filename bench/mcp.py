"""``search`` over MCP stdio: the round trip a coding agent waits for.

    python -m bench.mcp [--memories 10000] [--queries 200] [--json OUT]

A temporary encrypted development store is filled through the real engine
(``memory.save`` as an MCP client bound to ``project:bench``, every row in that
project, so every row is a candidate of every search: the worst case). Stored
vectors come from ``bench.bigstore.LookupEmbedder`` under the real model's id
(seeded unit vectors: an exact scan costs the same whatever the vectors say),
which keeps the fill fast. Then ``mama mcp`` runs as a subprocess and the SDK's
client calls ``search`` over stdio for the corpus questions; the server embeds
each query with the real GGUF model, as it does for Claude Code. Prints p50,
p95 and mean in milliseconds, after warm-up calls (which load the model),
and ends with ``mcp_search_p50_ms=… target_ms=50``.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from bench.bigstore import LookupEmbedder
from bench.corpus import Corpus
from mama_core.embeddings import QUERY, Embedder, load_embedder
from mama_core.errors import MamaError
from mama_core.memory import ActorKind, Engine, Grant, SessionFacts, TurnKind
from mama_core.store import DbKey, Store

PROJECT = "bench"
TARGET_MS = 50.0
WARMUP = 10
CLIENT = types.Implementation(name="bench-mcp", version="1")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def fill(db: Path, key: DbKey, corpus: Corpus, n: int, model_id: str, dim: int) -> int:
    """Save ``n`` judgments into ``project:bench`` through the engine; returns how many."""
    session = SessionFacts(ActorKind.MCP_CLIENT, "bench-fill", "1", TurnKind.MCP)
    grant = Grant.agent({f"project:{PROJECT}"})
    saved = 0
    began = time.perf_counter()
    with Store.open(db, key) as store, Engine(store, LookupEmbedder(model_id, dim)) as engine:
        for i in range(n):
            payload = {"kind": "fact" if i % 5 else "decision", "summary": corpus.text(i)}
            try:
                engine.dispatch("memory.save", payload, session, grant)
                saved += 1
            except MamaError:
                pass  # e.g. a text shaped like a secret: refused and skipped
            if (i + 1) % 2000 == 0:
                log(f"  saved {i + 1}/{n} ({time.perf_counter() - began:.0f} s)")
    return saved


async def measure(
    db: Path, key_hex: str, cache: Path, questions: list[str], count: int
) -> tuple[list[float], float]:
    """Round-trip times (s) of ``count`` searches, and the server's start-up time (s)."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MAMA_")},
        "MAMA_DB_KEY": key_hex,
        "MAMA_CACHE_DIR": str(cache),
        "MAMA_HOME": str(db.parent),
    }
    mama = Path(sys.executable).with_name("mama")
    params = StdioServerParameters(
        command=str(mama),
        args=["mcp", "--db", str(db), "--project", PROJECT],
        env=env,
        cwd=db.parent,
    )
    samples: list[float] = []
    with (db.parent / "server-stderr.txt").open("w") as errlog:
        began = time.perf_counter()
        async with Client(stdio_client(params, errlog=errlog), client_info=CLIENT) as client:
            await client.list_tools()
            startup = time.perf_counter() - began
            for i in range(WARMUP + count):
                query = questions[i % len(questions)]
                t0 = time.perf_counter()
                result = await client.call_tool("search", {"query": query, "limit": 10})
                elapsed = time.perf_counter() - t0
                if result.is_error:
                    raise SystemExit(f"search failed: {result.content}")
                if i >= WARMUP:
                    samples.append(elapsed)
    return samples, startup


def embedding_ms(embedder: Embedder, questions: list[str]) -> float:
    """Median time (ms) to embed one question with the real model, in this process."""
    embedder.embed_one("warm up", QUERY)
    times = []
    for q in questions:
        t0 = time.perf_counter()
        embedder.embed_one(q, QUERY)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures here.")
    args = parser.parse_args(argv)

    from app.local.paths import resolve_paths

    cache = resolve_paths().cache
    real = load_embedder(None, cache)
    corpus = Corpus.load()
    folder = Path(tempfile.mkdtemp(prefix="mama-bench-mcp-"))
    try:
        db = folder / "dev-memory.db"
        key_hex = secrets.token_hex(32)
        log(f"filling {args.memories} memories from {corpus.source} …")
        saved = fill(db, DbKey.from_secret(key_hex), corpus, args.memories, real.model_id, real.dim)
        log(f"stored {saved}; searching over stdio …")
        samples, startup = anyio.run(measure, db, key_hex, cache, corpus.questions, args.queries)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    embed_ms = embedding_ms(real, corpus.questions[: min(len(corpus.questions), 100)])
    ms = sorted(s * 1000 for s in samples)
    p50 = statistics.median(ms)
    p95 = statistics.quantiles(ms, n=100, method="inclusive")[94]
    figures: dict[str, Any] = {
        "memories": saved,
        "queries": len(ms),
        "p50_ms": round(p50, 2),
        "p95_ms": round(p95, 2),
        "mean_ms": round(statistics.fmean(ms), 2),
        "server_start_s": round(startup, 2),
        "query_embedding_p50_ms": round(embed_ms, 2),
        "target_ms": TARGET_MS,
    }
    print(f"search over MCP stdio, {saved} memories in project:{PROJECT}, {len(ms)} queries:")
    print(f"  p50 {p50:.1f} ms   p95 {p95:.1f} ms   mean {figures['mean_ms']:.1f} ms")
    print(f"  server start (to first tools/list) {startup:.2f} s")
    print(f"  (for reference: embedding one query in-process, p50 {embed_ms:.1f} ms)")
    print(f"mcp_search_p50_ms={p50:.1f} target_ms={TARGET_MS:.0f}")
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", "utf-8")


if __name__ == "__main__":
    main()
