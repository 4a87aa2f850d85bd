"""The review window's Work tab: the time to list the open commitments at size.

    QT_QPA_PLATFORM=offscreen python -m bench.work_tab [--commitments 1000] [--runs 20]

A temporary encrypted store gets ``--commitments`` commitments through
``memory.save`` (as ``bench.brief`` makes them: a third overdue, a third due
today or later, a third proposed from a source turn). The real ``WorkPanel``
over the real ``EngineBridge`` then (re)loads its list ``--runs`` times on a
qasync loop; each load is the catalog read (``commitment.list``) and the table
filled with overdue marked. Goal: at most 100 ms per load (reported, never
asserted). The embedder is a lookup table (saves would otherwise time the model).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from qasync import QEventLoop

from bench.bigstore import LookupEmbedder
from bench.brief import store_commitments
from mama_core.memory import Engine
from mama_core.store import DbKey, Store
from ui.bridge import EngineBridge
from ui.qt import QtWidgets
from ui.review.work_panel import WorkPanel
from ui.tasks import TaskGroup

GOAL_MS = 100


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--commitments", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args(argv)
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    loop = QEventLoop(app)
    asyncio.set_event_loop(loop)
    with tempfile.TemporaryDirectory(prefix="mama-bench-work-") as tmp:
        store = Store.open(Path(tmp) / "work.db", DbKey.generate())
        engine = Engine(store, LookupEmbedder("all-MiniLM-L6-v2-bench", 384))
        bridge = EngineBridge(engine, store)
        tasks = TaskGroup(lambda exc: print(f"failed: {exc!r}", file=sys.stderr))
        panel = WorkPanel(bridge, tasks)
        try:
            print(f"saving {args.commitments} commitments…", file=sys.stderr, flush=True)
            count = store_commitments(engine, args.commitments)

            async def timed() -> list[float]:
                await panel.load()  # warm: the reader pool and SQLite's page cache
                times: list[float] = []
                for _ in range(args.runs):
                    began = time.perf_counter()
                    await panel.load()
                    times.append(time.perf_counter() - began)
                return times

            times = loop.run_until_complete(timed())
            listed = len(panel.ids())
        finally:
            loop.run_until_complete(tasks.aclose())
            bridge.close()
            engine.close()
            store.close()
    median = statistics.median(times) * 1000
    print(
        f"Work tab over {count} commitments ({listed} listed, open and proposed): load "
        f"median {median:.1f} ms (min {min(times) * 1000:.1f}, max {max(times) * 1000:.1f}; "
        f"{args.runs} runs; goal ≤ {GOAL_MS} ms)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
