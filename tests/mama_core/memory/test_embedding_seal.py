"""A vector's seal comes with its row from the writer, and the trigger still seals a
row that came without it or with a wrong one (migration 0012): no writer can forget
the seal and none can forge it."""

from __future__ import annotations

import os

from mama_core.memory import Engine, verify_store
from mama_core.store import Store
from tests.mama_core.memory.helpers import save


def _row(store: Store, judgment_id: int, model_id: str) -> tuple[int, bytes, str]:
    dim, vector, seal = store.conn.execute(
        "SELECT dim, vector, seal FROM embeddings WHERE judgment_id = ? AND model_id = ?",
        (judgment_id, model_id),
    ).fetchone()
    return int(dim), bytes(vector), str(seal)


def _sealed(store: Store, judgment_id: int, model_id: str) -> str:
    dim, vector, _ = _row(store, judgment_id, model_id)
    return store.secret.seal("embeddings", judgment_id, model_id, dim, vector)


def test_a_saved_vector_carries_its_seal_and_verifies(engine: Engine, store: Store) -> None:
    jid = save(engine, "The staging database moves to eu-west-1")["judgment_id"]
    model_id = engine.embedder.model_id
    assert _row(store, jid, model_id)[2] == _sealed(store, jid, model_id)
    report = verify_store(store.conn, store.secret)
    assert report.ok, report.problems


def test_a_row_without_its_seal_or_with_a_forged_one_is_sealed_by_the_trigger(
    engine: Engine, store: Store
) -> None:
    jid = save(engine, "Invoices go out on the first Monday")["judgment_id"]
    vector = os.urandom(16)
    with store.conn:
        # As the re-embedding writes: no seal given.
        store.conn.execute(
            "INSERT INTO embeddings (judgment_id, model_id, dim, vector) VALUES (?, 'm-a', 4, ?)",
            (jid, vector),
        )
        # A forged seal: the trigger puts the right one in its place.
        store.conn.execute(
            "INSERT INTO embeddings (judgment_id, model_id, dim, vector, seal) "
            "VALUES (?, 'm-b', 4, ?, ?)",
            (jid, vector, "0" * 64),
        )
    for model_id in ("m-a", "m-b"):
        seal = _row(store, jid, model_id)[2]
        assert seal == _sealed(store, jid, model_id) != "0" * 64
    assert verify_store(store.conn, store.secret).ok


def test_a_vector_changed_behind_the_triggers_is_found(engine: Engine, store: Store) -> None:
    jid = save(engine, "Backups run nightly at two")["judgment_id"]
    assert verify_store(store.conn, store.secret).ok  # control: the store verifies
    with store.conn:
        store.conn.execute("DROP TRIGGER embeddings_seal_update")
        store.conn.execute(
            "UPDATE embeddings SET vector = ? WHERE judgment_id = ?", (os.urandom(1536), jid)
        )
    problems = verify_store(store.conn, store.secret).problems
    key = f"{jid}/{engine.embedder.model_id}"
    altered = f"embeddings row {key} was altered (its seal does not match)"
    assert altered in problems, problems
