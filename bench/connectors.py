"""Connectors: items per second from the fake Trello API to stored observations, and the
time from an item appearing at the source to its source-delta turn starting.

    python -m bench.connectors [--items 10000] [--arrivals 20] [--json OUT]

1. Throughput: the real Trello connector (httpx) reads ``--items`` board actions
   from the fake Trello API on 127.0.0.1 (1,000 per page) into a temporary
   encrypted store, 1,000 items per batch, each batch one transaction
   (observations, facets, cursor, source delta). Reported end to end and for
   the store alone (the poll's time — our client plus the fake server's own — is
   measured apart and left out).
2. Arrival to turn: a real ``OwnerRuntime`` in command mode and the connector
   scheduler with a 1 s interval; an action is added to the fake at a random
   moment, and the time until the runtime starts the turn for its source delta
   is measured, ``--arrivals`` times.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.backends.command_mode import CommandModeBackend
from app.connectors.trello import Trello
from app.durable.connector_store import ConnectorStore
from app.durable.schema import open_runtime_db
from app.runtime.connectors import ConnectorScheduler
from app.runtime.owner_runtime import OwnerRuntime, RuntimeSettings
from app.settings import ConnectorConfig
from bench.bigstore import LookupEmbedder
from mama_core.memory import Engine
from mama_core.store import DbKey, Store
from tests.app.connectors.fake_trello import API_KEY, TOKEN, FakeTrello


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def throughput(items: int, folder: Path) -> dict[str, float]:
    fake = FakeTrello()
    fake.add_card_moves(fake.add_board("Roadmap"), items)
    url = fake.serve()
    store = Store.open(folder / "throughput.db", DbKey.generate())
    db = open_runtime_db(store)
    connectors = ConnectorStore(db)
    trello = Trello("bench", ["Roadmap"], API_KEY, TOKEN, base_url=url)
    polling = storing = 0.0
    stored = 0
    began = time.perf_counter()
    try:
        cursor: str | None = None
        while True:
            t0 = time.perf_counter()
            batch = await trello.poll(cursor, 1000)
            t1 = time.perf_counter()
            result = await asyncio.to_thread(connectors.store_batch, "bench", "trello", batch)
            t2 = time.perf_counter()
            polling += t1 - t0
            storing += t2 - t1
            stored += len(result.new_ids)
            cursor = batch.cursor
            if not batch.more:
                break
    finally:
        total = time.perf_counter() - began
        await trello.aclose()
        db.close()
        store.close()
        fake.close()
    return {
        "items": stored,
        "total_s": total,
        "poll_s": polling,
        "store_s": storing,
        "items_per_s_end_to_end": stored / total,
        "items_per_s_stored": stored / storing,
    }


async def arrival_to_turn(arrivals: int, folder: Path) -> list[float]:
    fake = FakeTrello()
    board = fake.add_board("Roadmap")
    url = fake.serve()
    store = Store.open(folder / "latency.db", DbKey.generate())
    engine = Engine(store, LookupEmbedder("all-MiniLM-L6-v2-bench", 384))
    runtime = OwnerRuntime(engine, store, CommandModeBackend(), RuntimeSettings(poll_seconds=30.0))
    started: list[float] = []
    turn = asyncio.Event()

    def on_working(working: bool) -> None:
        if working:
            started.append(time.perf_counter())
            turn.set()

    runtime.working_listeners.append(on_working)
    await runtime.start()
    config = ConnectorConfig(
        name="bench", kind="trello", interval_s=1.0, options={"boards": "Roadmap", "base_url": url}
    )
    secrets = {"api_key": API_KEY, "token": TOKEN}
    scheduler = ConnectorScheduler(
        ConnectorStore(runtime.db, runtime.clock),
        lambda: (config,),
        runtime.run_db,
        on_stored=lambda _s: runtime.wake(),
        secret_for=lambda _name: secrets.get,
        clock=runtime.clock,
    )
    await scheduler.start()
    rng = random.Random(14)
    delays: list[float] = []
    try:
        for n in range(arrivals):
            await asyncio.sleep(rng.uniform(0.0, 1.0))  # a random moment in the interval
            turn.clear()
            before = len(started)
            fake.add_action(
                board,
                "commentCard",
                {"card": {"id": f"c{n}", "name": f"Card {n}"}, "text": f"arrival {n}"},
                at=datetime.now(UTC),
            )
            appeared = time.perf_counter()
            while len(started) == before:
                await asyncio.wait_for(turn.wait(), 30)
                turn.clear()
            delays.append(started[before] - appeared)
    finally:
        await scheduler.stop()
        await runtime.stop()
        engine.close()
        store.close()
        fake.close()
    return delays


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--arrivals", type=int, default=20)
    parser.add_argument("--json", dest="json_out", type=Path, default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mama-bench-connectors-") as tmp:
        folder = Path(tmp)
        print(f"reading {args.items} Trello actions…", file=sys.stderr, flush=True)
        rate = asyncio.run(throughput(args.items, folder))
        print(f"{args.arrivals} arrivals with a 1 s interval…", file=sys.stderr, flush=True)
        delays = asyncio.run(arrival_to_turn(args.arrivals, folder))
    latency: dict[str, Any] = {
        "p50_s": statistics.median(delays),
        "p95_s": percentile(delays, 0.95),
        "max_s": max(delays),
    }
    print(
        f"throughput: {rate['items']} items in {rate['total_s']:.2f} s: "
        f"{rate['items_per_s_end_to_end']:.0f} items/s end to end; "
        f"{rate['items_per_s_stored']:.0f} items/s stored "
        f"(store {rate['store_s']:.2f} s, poll incl. the fake server {rate['poll_s']:.2f} s)"
    )
    print(
        f"arrival to turn (1 s interval, {len(delays)} arrivals): p50 {latency['p50_s']:.2f} s, "
        f"p95 {latency['p95_s']:.2f} s, max {latency['max_s']:.2f} s"
    )
    if args.json_out:
        args.json_out.write_text(json.dumps({"throughput": rate, "latency": latency}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
