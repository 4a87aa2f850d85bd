"""What ``allowed`` costs a search: each row of ``memory.search`` carries the verbs its
reader may apply (``mama_core.memory.verbs``), which needs one query for the changes
waiting on the rows (``proposed_changes.waiting_on``).

    python -m bench.allowed [--memories 2000] [--changes 200] [--limit 200] [--runs 20]

A temporary encrypted store gets ``--memories`` owner facts (every fifth an agent's
proposal) and ``--changes`` retirements an agent proposed to the owner's facts. Then the
owner's ``memory.search`` with no words (every status, ``--limit`` rows) runs ``--runs``
times, and the part ``allowed`` adds (the waiting-change query and the table lookup for
the same rows) is timed on its own. Reported, never asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.bigstore import LookupEmbedder
from mama_core.memory import (
    ActorKind,
    Engine,
    Grant,
    SessionFacts,
    TurnKind,
    proposed_changes,
    verbs,
)
from mama_core.model import STATUSES
from mama_core.store import DbKey, Store

OWNER = SessionFacts.owner_cli()
AGENT = SessionFacts(actor_kind=ActorKind.AGENT, actor_name="bench", turn=TurnKind.OWNER_MESSAGE)


def _ms(seconds: list[float]) -> str:
    return f"median {statistics.median(seconds) * 1000:.2f} ms, max {max(seconds) * 1000:.2f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--changes", type=int, default=200)
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "allowed.db", DbKey.generate())
        engine = Engine(store, LookupEmbedder("all-MiniLM-L6-v2-bench", 384))
        try:
            owned: list[int] = []
            for n in range(args.memories):
                if n % 5 == 0:
                    payload = {"kind": "preference", "summary": f"Prefer tool {n}"}
                    payload["applies_when"] = "coding"
                    engine.dispatch("memory.save", payload, AGENT, Grant.agent(["global"]))
                else:
                    saved = engine.dispatch(
                        "memory.save",
                        {"kind": "fact", "summary": f"Server {n} is up"},
                        OWNER,
                        Grant.owner(),
                    )
                    owned.append(int(saved["judgment_id"]))
            for jid in owned[: args.changes]:
                retire = {"id": jid, "reason": "moved", "status": "stale"}
                engine.dispatch("memory.retire", retire, AGENT, Grant.agent(["global"]))
            query = {"query": "", "statuses": list(STATUSES), "limit": args.limit}
            searches: list[float] = []
            rows: list[dict[str, object]] = []
            for _ in range(args.runs):
                start = time.perf_counter()
                rows = engine.dispatch("memory.search", query, OWNER, Grant.owner())["results"]
                searches.append(time.perf_counter() - start)
            conn = store.new_connection()
            added: list[float] = []
            for _ in range(args.runs):
                start = time.perf_counter()
                waiting = proposed_changes.waiting_on(conn, [int(str(r["id"])) for r in rows])
                for row in rows:
                    verbs.allowed(
                        str(row["status"]), owner=True, waiting_change=row["id"] in waiting
                    )
                added.append(time.perf_counter() - start)
            conn.close()
        finally:
            engine.close()
            store.close()
    print(f"{args.memories} memories, {args.changes} waiting changes, {len(rows)} rows per search")
    print(f"memory.search (no words, every status): {_ms(searches)}")
    print(f"of which allowed (waiting_on + table): {_ms(added)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
