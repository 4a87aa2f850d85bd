"""Migration 0013 (``said_keys``: a keyed hash of each record's normalised words) on a
store that already holds records, one of them purged: every record not purged gets its
key, the purged one none, the chain still verifies, and a save then finds the exact
words of an older record through the new index."""

from __future__ import annotations

from pathlib import Path

from mama_core.embeddings.base import Embedder
from mama_core.memory import Engine, EngineConfig, verify_store
from mama_core.store import DbKey, Store
from mama_core.store.expected_schema import expected_objects, schema_objects
from mama_core.store.migrations import latest_version
from tests.mama_core.memory.helpers import OWNER, OWNER_GRANT

SAID_KEYS_MIGRATION = 13


def _keys(store: Store) -> dict[int, str]:
    rows = store.conn.execute("SELECT judgment_id, said_key FROM said_keys").fetchall()
    return {int(jid): str(key) for jid, key in rows}


def test_records_saved_before_0013_get_their_keys_and_verify(
    tmp_path: Path, db_key: DbKey, embedder: Embedder
) -> None:
    db = tmp_path / "mama.db"
    texts = [("We ship on Thursdays", None), ("Use tabs", "writing Go"), ("Lunch is at noon", None)]
    with Store.open(db, db_key) as store:
        with Engine(store, embedder, EngineConfig()) as engine:
            ids = [
                engine.dispatch(
                    "memory.save",
                    {"kind": "fact", "summary": s, "applies_when": w},
                    OWNER,
                    OWNER_GRANT,
                )["judgment_id"]
                for s, w in texts
            ]
            engine.dispatch("memory.purge", {"id": ids[2], "reason": "test"}, OWNER, OWNER_GRANT)
        assert set(_keys(store)) == set(ids[:2])  # control: the writer keeps the index
        # Put the store back as it was before 0013.
        store.conn.execute("DROP TABLE said_keys")
        store.conn.execute(f"PRAGMA user_version = {SAID_KEYS_MIGRATION - 1}")
        assert store.schema_version == SAID_KEYS_MIGRATION - 1

    with Store.open(db, db_key) as store:
        assert store.schema_version == latest_version() >= SAID_KEYS_MIGRATION and store.backups
        assert schema_objects(store.conn) == expected_objects(store.schema_version)
        keys = _keys(store)
        assert keys == {
            jid: store.secret.said_key(s, w) for jid, (s, w) in zip(ids[:2], texts, strict=False)
        }
        assert ids[2] not in keys  # the purged record's words left no key
        assert store.secret.said_key("use TABS", "writing go.") == keys[ids[1]]
        report = verify_store(store.conn, store.secret)
        assert report.ok, report
        with Engine(store, embedder, EngineConfig()) as engine:
            engine.recall()  # the cache path, which reads said_keys
            again = engine.dispatch(
                "memory.save",
                {"kind": "fact", "summary": "we ship on thursdays!"},
                OWNER,
                OWNER_GRANT,
            )
            assert again["code"] == "already_remembered" and again["duplicate_of"] == ids[0]
