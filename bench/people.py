"""One view per person: the time ``person.list`` and ``person.about`` take over a large store.

    python -m bench.people [--memories 5000] [--observations 10000] [--events 2000]
                           [--commitments 1000] [--people 200] [--runs 10] [--json OUT]

A temporary encrypted store gets ``--observations`` connector items by ``--people``
authors ("Person N <pN@corp.example>", three sources, as the connectors store them),
``--events`` calendar events with three attendees each (metadata as the calendar
connector writes it), ``--memories`` owner memories each naming one person, and
``--commitments`` commitments to and from them. Then the owner's ``person.list`` and
``person.about`` (one person, by their address) run ``--runs`` times each, and
``person.about`` once more for an agent granted one channel. Both read every visible
memory and author line (no index of names is kept): goal at most 500 ms each at this
size (reported, never asserted). The embedder is a lookup table (saves would
otherwise time the model).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from app.connectors.base import Batch, Item
from app.durable.connector_store import ConnectorStore
from app.durable.schema import open_runtime_db
from bench.bigstore import LookupEmbedder
from mama_core.memory import ActorKind, Engine, Grant, SessionFacts, TurnKind
from mama_core.store import DbKey, Store

SOURCES = ("slack:T01", "mail:me@example.com", "trello:me")
NOW = datetime.now(UTC)
OWNER = SessionFacts.owner_cli()
AGENT = SessionFacts(actor_kind=ActorKind.AGENT, actor_name="bench", turn=TurnKind.OWNER_MESSAGE)


def author(n: int) -> str:
    return f"Person {n} <p{n}@corp.example>"


def store_items(db: Any, observations: int, events: int, people: int) -> None:
    connectors = ConnectorStore(db)
    items: list[Item] = []
    for n in range(observations):
        source = SOURCES[n % len(SOURCES)]
        items.append(
            Item(
                source=source,
                external_id=f"m{n}",
                channel=f"ch{n % 5}",
                scope=f"channel:{source.split(':')[0]}/ch{n % 5}",
                author=author(n % people),
                at=NOW - timedelta(minutes=n),
                text=f"message {n} about the quarterly plan",
            )
        )
    for n in range(events):
        start = NOW + timedelta(hours=n - events // 2)
        attendees = [
            {"name": f"Person {(n + k) % people}", "email": f"p{(n + k) % people}@corp.example"}
            for k in range(3)
        ]
        items.append(
            Item(
                source="calendar:work",
                external_id=f"e{n}",
                channel="Work",
                scope="channel:calendar/work",
                author="Me <me@corp.example>",
                at=start - timedelta(days=7),
                text=f"Meeting {n}",
                metadata={
                    "kind": "event",
                    "start": start.isoformat(),
                    "end": (start + timedelta(minutes=30)).isoformat(),
                    "all_day": False,
                    "organizer": {"name": "Me", "email": "me@corp.example"},
                    "attendees": attendees,
                    "status": "confirmed",
                },
            )
        )
    for start in range(0, len(items), 1000):
        chunk = tuple(items[start : start + 1000])
        connectors.store_batch("bench", "bench", Batch(chunk, f"c{start}"))


def store_memories(engine: Engine, memories: int, commitments: int, people: int) -> None:
    payloads: list[Mapping[str, Any]] = [
        {"kind": "fact", "summary": f"Person {n % people} owns the topic number {n} of the plan"}
        for n in range(memories)
    ]
    payloads += [
        {
            "kind": "commitment",
            "summary": f"Send the report number {n}",
            "commitment": {
                "owed_by": "owner" if n % 2 else f"Person {n % people}",
                "owed_to": f"Person {n % people}" if n % 2 else "owner",
            },
        }
        for n in range(commitments)
    ]
    engine.dispatch_batch("memory.save", payloads, OWNER, Grant.owner())


def timed(run: Callable[[], Any], runs: int) -> list[float]:
    run()  # warm: the reader pool and SQLite's page cache
    times: list[float] = []
    for _ in range(runs):
        began = time.perf_counter()
        run()
        times.append((time.perf_counter() - began) * 1000)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--memories", type=int, default=5_000)
    parser.add_argument("--observations", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=2_000)
    parser.add_argument("--commitments", type=int, default=1_000)
    parser.add_argument("--people", type=int, default=200)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", dest="json_out", type=Path, default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mama-bench-people-") as tmp:
        store = Store.open(Path(tmp) / "people.db", DbKey.generate())
        engine = Engine(store, LookupEmbedder("all-MiniLM-L6-v2-bench", 384))
        db = open_runtime_db(store)
        try:
            print("storing items and memories…", file=sys.stderr, flush=True)
            store_items(db, args.observations, args.events, args.people)
            store_memories(engine, args.memories, args.commitments, args.people)
            owner = Grant.owner()
            listed = engine.dispatch("person.list", {}, OWNER, owner)["people"]
            page = engine.dispatch("person.about", {"name": "p7@corp.example"}, OWNER, owner)
            list_ms = timed(lambda: engine.dispatch("person.list", {}, OWNER, owner), args.runs)
            about_ms = timed(
                lambda: engine.dispatch("person.about", {"name": "Person 7"}, OWNER, owner),
                args.runs,
            )
            one_channel = Grant.agent(["channel:slack/ch2"])  # where Person 7 writes on Slack
            agent_ms = timed(
                lambda: engine.dispatch("person.about", {"name": "Person 7"}, AGENT, one_channel),
                args.runs,
            )
        finally:
            db.close()
            engine.close()
            store.close()
    result: dict[str, Any] = {
        "memories": args.memories,
        "observations": args.observations,
        "events": args.events,
        "commitments": args.commitments,
        "people_listed": len(listed),
        "list_median_ms": statistics.median(list_ms),
        "about_median_ms": statistics.median(about_ms),
        "agent_about_median_ms": statistics.median(agent_ms),
        "about_memories": page["memories_total"],
        "about_messages": len(page["messages"]),
        "about_meetings": len(page["meetings"]["upcoming"]) + len(page["meetings"]["recent"]),
        "goal_ms": 500,
        "runs": args.runs,
    }
    print(
        f"people over {args.memories} memories, {args.observations} messages, {args.events} "
        f"events, {args.commitments} commitments ({len(listed)} people): person.list median "
        f"{result['list_median_ms']:.0f} ms, person.about median "
        f"{result['about_median_ms']:.0f} ms (an agent on one channel: "
        f"{result['agent_about_median_ms']:.0f} ms); {args.runs} runs; goal ≤ 500 ms. "
        f"Person 7's page: {page['memories_total']} memories, {len(page['messages'])} "
        f"messages, {result['about_meetings']} meetings"
    )
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
