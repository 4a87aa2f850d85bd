"""An owner message to its reply through the owner runtime: what the owner waits for,
less the network.

    python -m bench.runtime_turn [--memories 10000] [--turns 200] [--json OUT]

A temporary encrypted store is grown through the real engine (``bench.bigstore``:
stored vectors from a lookup embedder, so the fill is fast); then a real
``OwnerRuntime`` in command mode runs with a channel that stamps the moment each
reply is handed to it. For each turn the benchmark posts an owner message
(``/search WORD`` — a hybrid recall — or ``/remember …`` — a write) and waits for
the reply: post → durable mailbox → claim → turn → durable completion with the
reply in the delivery journal → sender → channel. Beside it, in the same run,
the same searches and saves straight through ``Engine.dispatch``: the floor the
runtime adds its durability and hand-offs to. Prints p50/p95 of both and their
difference.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from app.backends.command_mode import CommandModeBackend
from app.durable.mailbox import InputKind, NewInput
from app.runtime.channel import OutgoingMessage
from app.runtime.owner_runtime import OwnerRuntime, RuntimeSettings
from bench.bigstore import GrowingStore, LookupEmbedder
from bench.corpus import Corpus
from mama_core.memory import Grant, SessionFacts

WORDS = ("deploy", "budget", "review", "launch", "printer", "design", "meeting", "release")


class StampingChannel:
    """The transport edge: notes when each reply arrives and wakes the waiting turn."""

    def __init__(self) -> None:
        self.arrived: list[float] = []
        self.event = asyncio.Event()

    def ready(self) -> bool:
        return True

    def split(self, message: OutgoingMessage) -> list[Any]:
        return [message]

    async def send_part(self, part: Any) -> str:
        self.arrived.append(time.perf_counter())
        self.event.set()
        return f"bench:{len(self.arrived)}"

    async def typing(self) -> None:
        return None


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def message(n: int) -> str:
    if n % 4 == 3:
        return f"/remember fact Bench note {n} about the {WORDS[n % len(WORDS)]}"
    return f"/search {WORDS[n % len(WORDS)]}"


async def through_runtime(grow: GrowingStore, turns: int) -> dict[str, list[float]]:
    runtime = OwnerRuntime(
        grow.engine, grow.store, CommandModeBackend(), RuntimeSettings(poll_seconds=30.0)
    )
    channel = StampingChannel()
    runtime.attach_channel(channel)
    await runtime.start()
    times: dict[str, list[float]] = {"search": [], "remember": []}
    try:
        for n in range(turns):
            channel.event.clear()
            before = len(channel.arrived)
            began = time.perf_counter()
            await runtime.post(NewInput(InputKind.OWNER_MESSAGE, "bench", str(n), message(n)))
            while len(channel.arrived) == before:
                await asyncio.wait_for(channel.event.wait(), 30)
                channel.event.clear()
            kind = "remember" if message(n).startswith("/remember") else "search"
            times[kind].append((channel.arrived[before] - began) * 1000)
    finally:
        await runtime.stop()
    return times


def straight(grow: GrowingStore, turns: int) -> dict[str, list[float]]:
    owner, grant = SessionFacts.owner_cli(), Grant.owner()
    times: dict[str, list[float]] = {"search": [], "remember": []}
    for n in range(turns):
        text = message(n)
        began = time.perf_counter()
        if text.startswith("/remember"):
            summary = text.removeprefix("/remember fact ") + " (direct)"
            grow.engine.dispatch("memory.save", {"kind": "fact", "summary": summary}, owner, grant)
            times["remember"].append((time.perf_counter() - began) * 1000)
        else:
            query = {"query": text.removeprefix("/search "), "limit": 5}
            grow.engine.dispatch("memory.search", query, owner, grant)
            times["search"].append((time.perf_counter() - began) * 1000)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--json", dest="json_out", type=Path, default=None)
    args = parser.parse_args(argv)

    corpus = Corpus.load(args.corpus)
    lookup = LookupEmbedder("all-MiniLM-L6-v2-bench", 384)
    grow = GrowingStore(corpus, lookup)
    try:
        print(f"growing the store to {args.memories} memories…", file=sys.stderr, flush=True)
        grow.grow_to(args.memories, batch=500)
        floor = straight(grow, args.turns)  # also warms the vector cache
        runtime = asyncio.run(through_runtime(grow, args.turns))
    finally:
        grow.close()

    rows: dict[str, dict[str, float]] = {}
    print(f"{args.memories} memories, {args.turns} turns each way (ms)")
    print(f"{'':10} {'runtime p50':>12} {'p95':>8} {'engine p50':>12} {'p95':>8} {'added p50':>10}")
    for kind in ("search", "remember"):
        through, direct = runtime[kind], floor[kind]
        row = {
            "runtime_p50": statistics.median(through),
            "runtime_p95": percentile(through, 0.95),
            "engine_p50": statistics.median(direct),
            "engine_p95": percentile(direct, 0.95),
        }
        row["added_p50"] = row["runtime_p50"] - row["engine_p50"]
        rows[kind] = row
        print(
            f"{kind:10} {row['runtime_p50']:12.2f} {row['runtime_p95']:8.2f} "
            f"{row['engine_p50']:12.2f} {row['engine_p95']:8.2f} {row['added_p50']:10.2f}"
        )
    if args.json_out:
        args.json_out.write_text(json.dumps({"memories": args.memories, **rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
