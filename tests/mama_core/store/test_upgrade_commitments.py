"""A store written at schema 6 by the MAMA of that time (tests/mama_core/store/data/
store_v6.db, key TEST_KEY_HEX, made by data/make_store_v6.py at commit ce2637f) upgrades
to the commitments schema: the judgments table is rebuilt (its kind CHECK now allows
``commitment``) with every row, trigger, index, FTS entry, reference and event intact,
``verify`` holds, and commitments can be written and purged on it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mama_core.embeddings.base import Embedder
from mama_core.memory import Engine, EngineConfig, verify_store
from mama_core.store import DbKey, Store, sqlcipher
from mama_core.store.expected_schema import expected_objects, schema_objects
from tests.conftest import TEST_KEY_HEX
from tests.mama_core.memory.helpers import OWNER, OWNER_GRANT

V6 = Path(__file__).parent / "data" / "store_v6.db"


def _snapshot(conn: sqlcipher.Connection) -> dict[str, list[tuple[object, ...]]]:
    return {
        "judgments": conn.execute("SELECT * FROM judgments ORDER BY id").fetchall(),
        "events": conn.execute("SELECT id, hash FROM events ORDER BY id").fetchall(),
        "bindings": conn.execute("SELECT * FROM scope_bindings ORDER BY 1, 2").fetchall(),
        "edges": conn.execute("SELECT * FROM edges ORDER BY id").fetchall(),
        "fts": conn.execute(
            "SELECT rowid FROM judgments_fts WHERE judgments_fts MATCH 'quarterly' ORDER BY rowid"
        ).fetchall(),
        "trigram": conn.execute(
            "SELECT rowid FROM judgments_trigram WHERE judgments_trigram MATCH 'uarter' "
            "ORDER BY rowid"
        ).fetchall(),
    }


def test_a_schema_6_store_upgrades_with_everything_intact(
    tmp_path: Path, embedder: Embedder
) -> None:
    db = tmp_path / "mama.db"
    shutil.copy(V6, db)
    key = DbKey.from_secret(TEST_KEY_HEX)
    raw = sqlcipher.connect(str(db))
    raw.execute(f"PRAGMA key = {key.pragma_value()}")
    assert raw.execute("PRAGMA user_version").fetchone()[0] == 6
    before = _snapshot(raw)
    raw.close()
    assert before["fts"] and before["trigram"] and len(before["events"]) >= 8  # controls

    with Store.open(db, key) as store:
        conn = store.conn
        assert store.backups and store.schema_version > 6
        assert _snapshot(conn) == before
        assert schema_objects(conn) == expected_objects(store.schema_version)
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1  # on again
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        report = verify_store(conn, store.secret)
        assert report.ok, report.problems
        with pytest.raises(sqlcipher.IntegrityError, match="never deleted"):
            conn.execute("DELETE FROM judgments WHERE id = 1")
        with pytest.raises(sqlcipher.IntegrityError, match="append-only"):
            conn.execute("UPDATE judgments SET summary = 'x' WHERE id = 1")
        with pytest.raises(sqlcipher.IntegrityError, match="FOREIGN KEY"):
            conn.execute("INSERT INTO scope_bindings (judgment_id, scope_id) VALUES (999, 1)")

        with Engine(store, embedder, EngineConfig(checkpoint_wal_after_purge=False)) as engine:
            saved = engine.dispatch(
                "memory.save",
                {
                    "kind": "commitment",
                    "summary": "Send Dana the quarterly deck",
                    "commitment": {"owed_to": "Dana", "source_observations": [2]},
                },
                OWNER,
                OWNER_GRANT,
            )
            done = engine.dispatch(
                "commitment.close",
                {"id": saved["judgment_id"], "outcome": "done"},
                OWNER,
                OWNER_GRANT,
            )
            found = engine.dispatch(
                "memory.search",
                {"query": "quarterly deck", "kinds": ["commitment"]},
                OWNER,
                OWNER_GRANT,
            )
        assert [r["id"] for r in found["results"]] == [done["judgment_id"]]
        report = verify_store(conn, store.secret)
        assert report.ok, report.problems
