"""Connectors: items per second from each source to stored observations, and the time
from an item appearing at the source to its source-delta turn starting.

    python -m bench.connectors [--items 10000] [--slack 10000] [--mail 2000]
                               [--daemon 10000] [--arrivals 20] [--json OUT]

1. Throughput, per connector, each into a temporary encrypted store, each batch one
   transaction (observations, facets, cursor, source delta):
   - Trello: the real connector (httpx) reads ``--items`` board actions from the
     fake Trello API on 127.0.0.1 (1,000 per page and per batch);
   - Slack: the real connector (slack-sdk) reads ``--slack`` messages and thread
     replies (``bench.slack_feed``'s workspace, two channels) from the fake Slack
     Web API (on a thread of its own), 1,000 per batch;
   - mail: the real connector (imapclient, TLS) reads ``--mail`` varied emails
     (``bench.mail_read``'s) APPENDed to a throwaway Dovecot, 500 per batch; the
     APPENDs are not counted.
   Reported end to end; end to end without the server's CPU time where it is
   measured (the fake Slack's thread, read from its CPU clock; Dovecot's processes,
   read from ``/proc``); for the store alone (the poll's time — our client plus the
   server's — left out); per CPU second of ours (our client, parsing and store:
   the fake Slack's thread is taken out of this process's CPU time, Dovecot is never
   in it; the Trello fake, threads here, is not measured apart and stays in); and the
   same batches stored once more (every item already held, as after a lost cursor).
2. Through the daemon's path: ``--daemon`` Slack messages read by the connector
   scheduler with its default settings beside a real ``OwnerRuntime`` in command mode
   (one database thread for the polls' reads, the batches and the turns), until all
   are stored.
3. Arrival to turn: a real ``OwnerRuntime`` in command mode and the connector
   scheduler with a 1 s interval; an action is added to the fake at a random
   moment, and the time until the runtime starts the turn for its source delta
   is measured, ``--arrivals`` times.
"""

from __future__ import annotations

import argparse
import asyncio
import imaplib
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.backends.command_mode import CommandModeBackend
from app.connectors.base import Batch, Connector
from app.connectors.mail import build as build_mail
from app.connectors.slack import build as build_slack
from app.connectors.trello import Trello
from app.durable.connector_store import ConnectorStore, Stored
from app.durable.schema import open_runtime_db
from app.local.settings import ConnectorConfig
from app.runtime.connectors import ConnectorScheduler, PollSettings
from app.runtime.owner_runtime import OwnerRuntime, RuntimeSettings
from bench.bigstore import LookupEmbedder
from bench.mail_read import message as mail_message
from bench.slack_feed import fill_workspace
from mama_core.memory import Engine
from mama_core.store import DbKey, Store
from tests.app.connectors.dovecot_server import PASSWORD, dovecot_binary, running_dovecot
from tests.app.connectors.fake_slack import FakeSlack
from tests.app.connectors.fake_trello import API_KEY, TOKEN, FakeTrello


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def drain(
    connector: Connector,
    folder: Path,
    kind: str,
    limit: int,
    fake_cpu: Callable[[], float] | None = None,
    *,
    fake_in_process: bool = True,
) -> dict[str, float]:
    """Poll ``connector`` from no cursor until it has no more, storing each batch in one
    transaction of a fresh encrypted store; the times of polling and of storing apart.

    ``fake_cpu`` reads the fake server's CPU seconds so far (None: not measured); what it
    spends during the drain is taken out of the wall time, and out of this process's CPU
    time too when the fake runs in this process (``fake_in_process``)."""
    store = Store.open(folder / f"throughput-{kind}.db", DbKey.generate())
    db = open_runtime_db(store)
    connectors = ConnectorStore(db)
    polling = storing = 0.0
    stored = 0
    batches: list[Batch] = []
    fake_began = fake_cpu() if fake_cpu is not None else 0.0
    began, cpu_began = time.perf_counter(), time.process_time()
    try:
        cursor: str | None = None
        while True:
            t0 = time.perf_counter()
            batch = await connector.poll(cursor, limit)
            t1 = time.perf_counter()
            result = await asyncio.to_thread(connectors.store_batch, "bench", kind, batch)
            t2 = time.perf_counter()
            polling += t1 - t0
            storing += t2 - t1
            stored += len(result.new_ids)
            batches.append(batch)
            cursor = batch.cursor
            if not batch.more:
                break
        total = time.perf_counter() - began
        cpu = time.process_time() - cpu_began
        fake = fake_cpu() - fake_began if fake_cpu is not None else 0.0
        # The same batches once more, as after a lost cursor or a folder's UIDs renumbered:
        # every item is already held, and none may be stored twice.
        again_began, again_cpu_began = time.perf_counter(), time.process_time()
        for batch in batches:
            if connectors.store_batch("bench", kind, batch).new_ids:
                raise RuntimeError(f"{kind}: an item already stored was stored again")
        again_s = time.perf_counter() - again_began
        again_cpu = time.process_time() - again_cpu_began
    finally:
        await connector.aclose()
        db.close()
        store.close()
    ours = cpu - fake if fake_in_process else cpu
    seen = sum(len(b.items) for b in batches)
    return {
        "items": stored,
        "total_s": total,
        "poll_s": polling,
        "store_s": storing,
        "fake_s": fake,
        "fake_measured": float(fake_cpu is not None),
        "cpu_s": ours,
        "items_per_s_end_to_end": stored / total,
        "items_per_s_without_fake": stored / max(1e-9, total - fake),
        "items_per_s_stored": stored / storing,
        "stored_again_s": again_s,
        "items_per_cpu_s_stored_again": seen / max(1e-9, again_cpu),
        "items_per_cpu_s": stored / max(1e-9, ours),
    }


async def trello_throughput(items: int, folder: Path) -> dict[str, float]:
    """The fake Trello API runs on a thread; its time is not measured apart."""
    fake = FakeTrello()
    fake.add_card_moves(fake.add_board("Roadmap"), items)
    url = fake.serve()
    try:
        trello = Trello("bench", ["Roadmap"], API_KEY, TOKEN, base_url=url)
        return await drain(trello, folder, "trello", 1000)
    finally:
        fake.close()


async def slack_throughput(items: int, folder: Path) -> dict[str, float]:
    """The fake Slack Web API runs on a thread and loop of its own; that thread's CPU
    time (HTTP, JSON and handlers) is taken out."""
    fake = FakeSlack()
    names = fill_workspace(fake, items, 2)
    fake.start_thread()
    try:
        slack = build_slack(
            "bench",
            {"channels": [f"#{n}" for n in names], "base_url": fake.url},
            {"token": fake.token}.get,
        )
        return await drain(slack, folder, "slack", 1000, lambda: fake.server_cpu_seconds)
    finally:
        fake.stop_thread()


def mail_throughput(items: int, folder: Path) -> dict[str, float]:
    """A real Dovecot over TLS; its CPU time (all its processes, from ``/proc``) is taken
    out of the wall time (it is never in this process's CPU time)."""
    with running_dovecot() as server:
        imap = imaplib.IMAP4_SSL(server.host, server.port, ssl_context=server.ssl_context())
        imap.login(server.user, PASSWORD)
        for n in range(items):
            imap.append("INBOX", None, None, mail_message(n))
        imap.logout()
        mail = build_mail("bench", server.options(), lambda _key: PASSWORD)
        return asyncio.run(
            drain(mail, folder, "mail", 500, server.cpu_seconds, fake_in_process=False)
        )


async def daemon_throughput(items: int, folder: Path) -> dict[str, float]:
    """Slack messages through the path ``mama daemon`` runs: the connector scheduler with
    its default settings beside a real ``OwnerRuntime`` in command mode, every poll's
    reads and writes and every source-delta turn on the runtime's one database thread;
    timed from the scheduler's start until every item is stored. The fake Slack's
    thread's CPU time is taken out as in ``slack_throughput``."""
    fake = FakeSlack()
    names = fill_workspace(fake, items, 2)
    fake.start_thread()
    store = Store.open(folder / "daemon.db", DbKey.generate())
    engine = Engine(store, LookupEmbedder("all-MiniLM-L6-v2-bench", 384))
    runtime = OwnerRuntime(engine, store, CommandModeBackend(), RuntimeSettings(poll_seconds=30.0))
    turns = 0

    def on_working(working: bool) -> None:
        nonlocal turns
        turns += working

    runtime.working_listeners.append(on_working)
    await runtime.start()
    config = ConnectorConfig(
        name="bench",
        kind="slack",
        interval_s=60.0,
        options={"channels": [f"#{n}" for n in names], "base_url": fake.url},
    )
    stored, polls = 0, 0
    everything = asyncio.Event()

    def on_stored(result: Stored) -> None:
        nonlocal stored, polls
        stored, polls = stored + len(result.new_ids), polls + 1
        runtime.wake()
        if stored >= items:
            everything.set()

    scheduler = ConnectorScheduler(
        ConnectorStore(runtime.db, runtime.clock),
        lambda: (config,),
        runtime.run_db,
        on_stored=on_stored,
        secret_for=lambda _name: {"token": fake.token}.get,
        clock=runtime.clock,
    )
    fake_began = fake.server_cpu_seconds
    began, cpu_began = time.perf_counter(), time.process_time()
    try:
        await scheduler.start()
        await asyncio.wait_for(everything.wait(), 900)
        total = time.perf_counter() - began
        cpu = time.process_time() - cpu_began
        fake_cpu = fake.server_cpu_seconds - fake_began
    finally:
        await scheduler.stop()
        await runtime.stop()
        engine.close()
        store.close()
        fake.stop_thread()
    return {
        "items": stored,
        "polls": polls,
        "turns_started": turns,
        "batch_limit": PollSettings().batch_limit,
        "total_s": total,
        "fake_s": fake_cpu,
        "cpu_s": cpu - fake_cpu,
        "items_per_s_end_to_end": stored / total,
        "items_per_s_without_fake": stored / max(1e-9, total - fake_cpu),
        "items_per_cpu_s": stored / max(1e-9, cpu - fake_cpu),
    }


def daemon_line(rate: dict[str, float]) -> str:
    return (
        f"slack through the daemon's scheduler ({rate['batch_limit']:.0f} a poll, "
        f"{rate['polls']:.0f} polls, {rate['turns_started']:.0f} turns started meanwhile): "
        f"{rate['items']:.0f} items in {rate['total_s']:.2f} s: "
        f"{rate['items_per_s_end_to_end']:.0f} items/s end to end; "
        f"{rate['items_per_s_without_fake']:.0f} items/s without the server's "
        f"{rate['fake_s']:.2f} CPU s; {rate['items_per_cpu_s']:.0f} items per CPU second "
        f"of ours ({rate['cpu_s']:.2f} CPU s)"
    )


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


def line(kind: str, rate: dict[str, float]) -> str:
    without = (
        f"{rate['items_per_s_without_fake']:.0f} items/s without the server's "
        f"{rate['fake_s']:.2f} CPU s; "
        if rate["fake_measured"]
        else "(the server's time not measured apart); "
    )
    return (
        f"{kind}: {rate['items']:.0f} items in {rate['total_s']:.2f} s: "
        f"{rate['items_per_s_end_to_end']:.0f} items/s end to end; {without}"
        f"{rate['items_per_s_stored']:.0f} items/s stored "
        f"(store {rate['store_s']:.2f} s, poll {rate['poll_s']:.2f} s); "
        f"{rate['items_per_cpu_s']:.0f} items per CPU second of ours "
        f"({rate['cpu_s']:.2f} CPU s); the same batches stored again (all held) in "
        f"{rate['stored_again_s']:.3f} s, "
        f"{rate['items_per_cpu_s_stored_again']:.0f} items per CPU second"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000, help="Trello actions")
    parser.add_argument("--slack", type=int, default=10_000, help="Slack messages")
    parser.add_argument("--mail", type=int, default=2_000, help="emails (0: skip Dovecot)")
    parser.add_argument(
        "--daemon", type=int, default=10_000, help="Slack messages through the scheduler (0: skip)"
    )
    parser.add_argument("--arrivals", type=int, default=20)
    parser.add_argument("--json", dest="json_out", type=Path, default=None)
    args = parser.parse_args(argv)
    rates: dict[str, dict[str, float]] = {}
    daemon: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="mama-bench-connectors-") as tmp:
        folder = Path(tmp)
        print(f"reading {args.items} Trello actions…", file=sys.stderr, flush=True)
        rates["trello"] = asyncio.run(trello_throughput(args.items, folder))
        print(f"reading {args.slack} Slack messages…", file=sys.stderr, flush=True)
        rates["slack"] = asyncio.run(slack_throughput(args.slack, folder))
        if args.mail and dovecot_binary() is not None:
            print(f"reading {args.mail} emails from Dovecot…", file=sys.stderr, flush=True)
            rates["mail"] = mail_throughput(args.mail, folder)
        if args.daemon:
            print(
                f"reading {args.daemon} Slack messages through the scheduler…",
                file=sys.stderr,
                flush=True,
            )
            daemon = asyncio.run(daemon_throughput(args.daemon, folder))
        print(f"{args.arrivals} arrivals with a 1 s interval…", file=sys.stderr, flush=True)
        delays = asyncio.run(arrival_to_turn(args.arrivals, folder))
    latency: dict[str, Any] = {
        "p50_s": statistics.median(delays),
        "p95_s": percentile(delays, 0.95),
        "max_s": max(delays),
    }
    for kind, rate in rates.items():
        print(line(kind, rate))
    if daemon:
        print(daemon_line(daemon))
    print(
        f"arrival to turn (1 s interval, {len(delays)} arrivals): p50 {latency['p50_s']:.2f} s, "
        f"p95 {latency['p95_s']:.2f} s, max {latency['max_s']:.2f} s"
    )
    if args.json_out:
        found: dict[str, Any] = {"throughput": rates, "latency": latency}
        if daemon:
            found["daemon"] = daemon
        args.json_out.write_text(json.dumps(found, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
