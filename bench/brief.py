"""The daily brief: the time MAMA takes to write the command-mode brief over a large store.

    python -m bench.brief [--observations 10000] [--commitments 1000] [--runs 20] [--json OUT]

A temporary encrypted store gets ``--observations`` connector items (three
sources, five channels each, stored in batches as the connectors store them),
``--commitments`` commitments (through ``memory.save``, one transaction: a third
overdue, a third due today or later, a third proposed from a source turn) and
200 proposals. Then the brief is written ``--runs`` times by ``BriefWriter``
(the catalog reads and the pure builder), and once more split into the reads
and the builder. Goal: at most 200 ms per brief (reported, never asserted).
The embedder is a lookup table (saves would otherwise time the model).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from app.connectors.base import Batch, Item
from app.durable.connector_store import ConnectorStore
from app.durable.schema import open_runtime_db
from app.runtime.brief import build_brief
from app.runtime.brief_gather import BriefWriter
from bench.bigstore import LookupEmbedder
from mama_core.memory import ActorKind, Engine, Grant, SessionFacts, TurnKind
from mama_core.model import KINDS
from mama_core.store import DbKey, Store

SOURCES = ("slack:T01", "mail:me@example.com", "trello:me")
CHANNELS = ("general", "dev", "sales", "support", "random")
NOW = datetime.now(UTC)
SOURCE_TURN = SessionFacts(
    actor_kind=ActorKind.AGENT, actor_name="bench", turn=TurnKind.SOURCE_DELTA
)


def store_observations(db: Any, count: int) -> None:
    connectors = ConnectorStore(db)
    per_source = count // len(SOURCES)
    for source in SOURCES:
        items = [
            Item(
                source=source,
                external_id=f"{n}",
                channel=CHANNELS[n % len(CHANNELS)],
                scope=f"channel:{source.split(':')[0]}",
                author="Anna",
                at=NOW - timedelta(minutes=n),
                text=f"message {n} about the quarterly plan and the launch checklist",
                metadata={},
            )
            for n in range(per_source)
        ]
        for start in range(0, len(items), 1000):
            chunk = tuple(items[start : start + 1000])
            cursor = json.dumps({"last": chunk[-1].external_id})
            connectors.store_batch(source, source.split(":")[0], Batch(chunk, cursor))


def store_commitments(engine: Engine, count: int) -> int:
    """``count`` commitments through memory.save (0 if this build has no commitments)."""
    if "commitment" not in KINDS:
        return 0
    owner: list[Mapping[str, Any]] = []
    proposed: list[Mapping[str, Any]] = []
    for n in range(count):
        due = NOW + timedelta(hours=(n % 3 - 1) * 30 + n % 7)
        payload = {
            "kind": "commitment",
            "summary": f"Send the report number {n} to the client",
            "commitment": {
                "owed_by": "owner",
                "owed_to": f"Client {n % 40}",
                "due": due.isoformat(),
                "source_observations": [],
            },
        }
        (proposed if n % 3 == 2 else owner).append(payload)
    engine.dispatch_batch("memory.save", owner, SessionFacts.owner_cli(), Grant.owner())
    engine.dispatch_batch("memory.save", proposed, SOURCE_TURN, Grant.agent(["global"]))
    return count


def store_proposals(engine: Engine, count: int) -> None:
    payloads: list[Mapping[str, Any]] = [
        {"kind": "preference", "summary": f"Prefer option {n}", "applies_when": "planning"}
        for n in range(count)
    ]
    engine.dispatch_batch("memory.save", payloads, SOURCE_TURN, Grant.agent(["global"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--observations", type=int, default=10_000)
    parser.add_argument("--commitments", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", dest="json_out", type=Path, default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mama-bench-brief-") as tmp:
        store = Store.open(Path(tmp) / "brief.db", DbKey.generate())
        engine = Engine(store, LookupEmbedder("all-MiniLM-L6-v2-bench", 384))
        db = open_runtime_db(store)
        try:
            print(f"storing {args.observations} observations…", file=sys.stderr, flush=True)
            store_observations(db, args.observations)
            print(f"saving {args.commitments} commitments…", file=sys.stderr, flush=True)
            commitments = store_commitments(engine, args.commitments)
            store_proposals(engine, 200)
            owner = SessionFacts.owner_cli()
            engine.dispatch(
                "owner.set_timezone", {"timezone": "Europe/Berlin"}, owner, Grant.owner()
            )
            writer = BriefWriter(engine, db)
            text = writer.compose()  # warm: the reader pool and SQLite's page cache
            times: list[float] = []
            for _ in range(args.runs):
                began = time.perf_counter()
                writer.compose()
                times.append(time.perf_counter() - began)
            began = time.perf_counter()
            inputs, _newest = writer.gather()
            gathered = time.perf_counter() - began
            build_brief(inputs)
            built = time.perf_counter() - began - gathered
        finally:
            db.close()
            engine.close()
            store.close()
    result: dict[str, Any] = {
        "observations": args.observations,
        "commitments": commitments,
        "proposals": 200,
        "runs": args.runs,
        "median_ms": statistics.median(times) * 1000,
        "min_ms": min(times) * 1000,
        "max_ms": max(times) * 1000,
        "reads_ms": gathered * 1000,
        "builder_ms": built * 1000,
        "goal_ms": 200,
        "lines": len(text.splitlines()),
    }
    print(
        f"brief over {args.observations} observations, {commitments} commitments, 200 "
        f"proposals: median {result['median_ms']:.1f} ms (min {result['min_ms']:.1f}, max "
        f"{result['max_ms']:.1f}; {args.runs} runs; goal ≤ 200 ms); one run split: reads "
        f"{result['reads_ms']:.1f} ms, builder {result['builder_ms']:.2f} ms"
    )
    print(text)
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
