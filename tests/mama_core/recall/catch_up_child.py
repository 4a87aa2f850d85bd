"""A process that opens a store with another model's id and catches up on its vectors.

Run by ``test_catch_up.py`` as a real subprocess: ``python -m
tests.mama_core.recall.catch_up_child DB MODEL_PATH MODEL_ID [hold]``. It prints
``progress DONE TOTAL`` after each batch and ``done VECTORS`` (its own vector
cache's count) when nothing is left. With ``hold`` it stops answering after the
first committed batch (it waits on stdin), so the test can kill it mid-way
without racing it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mama_core.embeddings import GgufEmbedder
from mama_core.memory import Engine
from mama_core.memory.catch_up import CatchUpProgress
from mama_core.store import DbKey, Store
from tests.conftest import TEST_KEY_HEX


def main(argv: list[str]) -> None:
    db, model_path, model_id = Path(argv[0]), Path(argv[1]), argv[2]
    hold = len(argv) > 3 and argv[3] == "hold"
    store = Store.open(db, DbKey.from_secret(TEST_KEY_HEX))
    embedder = GgufEmbedder(model_path, model_id=model_id)
    with Engine(store, embedder) as engine:
        catch_up = engine.catch_up_vectors()

        def report(progress: CatchUpProgress) -> None:
            print(f"progress {progress.done} {progress.total}", flush=True)
            if hold and progress.done > 0:
                sys.stdin.readline()  # the test kills us here

        catch_up.subscribe(report)
        if not catch_up.wait_idle(timeout=600):
            raise SystemExit("catch-up did not finish")
        cache = engine.vector_cache
        print(f"done {0 if cache is None else cache.vector_count}", flush=True)
    store.close()
    embedder.close()


if __name__ == "__main__":
    main(sys.argv[1:])
