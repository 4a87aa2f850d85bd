"""The one writer: a mutation is all or nothing (a failure after its first writes
rolls everything back), and every commit happens on the one writer thread."""

from __future__ import annotations

import threading

import pytest

from mama_core.memory import Engine, verify_store
from mama_core.memory.dispatcher import command_for, prepare_call
from mama_core.memory.writer import Applied, Tx
from mama_core.model import ChangeSet
from tests.mama_core.memory.helpers import OWNER, OWNER_GRANT, event_count, save, search_ids


class Boom(Exception):
    pass


def _counts(engine: Engine) -> tuple[int, ...]:
    row = engine.store.conn.execute(
        "SELECT (SELECT count(*) FROM judgments), (SELECT count(*) FROM scope_bindings), "
        "(SELECT count(*) FROM embeddings), (SELECT count(*) FROM edges), "
        "(SELECT count(*) FROM events), (SELECT count(*) FROM receipts)"
    ).fetchone()
    return tuple(row)


def test_a_failure_after_writes_leaves_nothing_half_written(engine: Engine) -> None:
    old = save(engine, "Lemurs eat fruit")["judgment_id"]
    before = _counts(engine)
    call = prepare_call(
        engine.catalog,
        "memory.save",
        {"kind": "fact", "summary": "Lemurs eat leaves", "replaces": [old]},
        OWNER,
        OWNER_GRANT,
    )
    real = call.spec.command(call, engine._env)

    def apply_then_fail(tx: Tx) -> Applied:
        real.apply(tx)  # row, bindings, vector, edge and the predecessor's status
        raise Boom

    with pytest.raises(Boom):
        engine._writer.submit(command_for(call, apply_then_fail)).result(timeout=60)
    assert _counts(engine) == before
    assert search_ids(engine, "lemurs") == [old]
    assert not engine.store.conn.in_transaction
    # The same command id now runs for real: no receipt was left behind.
    receipt = engine._writer.submit(real).result(timeout=60).receipt
    assert receipt.replayed is False
    assert search_ids(engine, "lemurs") == [receipt.judgment_id]
    assert verify_store(engine.store.conn, engine.store.secret).ok


def test_every_commit_runs_on_the_one_writer_thread(engine: Engine) -> None:
    threads: set[str] = set()

    def record(changes: ChangeSet) -> None:
        threads.add(threading.current_thread().name)

    engine.subscribe(record)
    workers = [threading.Thread(target=save, args=(engine, f"from worker {n}")) for n in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=60)
    save(engine, "from the test thread")
    assert event_count(engine) == 4
    assert len(threads) == 1
    assert next(iter(threads)).startswith("mama-writer")
