"""A store written before the log kept keyed hashes (schema 3, made by the MAMA of
that time: tests/mama_core/store/data/store_v3.db, key TEST_KEY_HEX) upgrades and
verifies: its old events are accepted as they are, its rows written outside the
writer are sealed by the upgrade (a later change of them is found), and new
writes on it (a retire, a purge of an old record) verify too.

What the upgrade cannot do, by design: the reasons the old events carry in their
chained payload stay there (rewriting them would break the chain)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from mama_core.embeddings.base import Embedder
from mama_core.memory import Engine, EngineConfig, verify_store
from mama_core.store import DbKey, Store
from mama_core.store.expected_schema import expected_objects, schema_objects
from tests.conftest import TEST_KEY_HEX
from tests.mama_core.memory.helpers import OWNER, OWNER_GRANT

V3 = Path(__file__).parent / "data" / "store_v3.db"


def test_a_schema_3_store_upgrades_and_verifies(tmp_path: Path, embedder: Embedder) -> None:
    db = tmp_path / "mama.db"
    shutil.copy(V3, db)
    key = DbKey.from_secret(TEST_KEY_HEX)
    with Store.open(db, key) as store:
        assert store.backups and store.schema_version > 3
        assert schema_objects(store.conn) == expected_objects(store.schema_version)
        report = verify_store(store.conn, store.secret)
        assert report.ok, report.problems
        assert report.events == 6
        old_retire = store.conn.execute(
            "SELECT payload FROM events WHERE action = 'memory.retire'"
        ).fetchone()[0]
        assert json.loads(old_retire)["reason"] == "legacyreasonword spaces"  # stays

        with Engine(store, embedder, EngineConfig()) as engine:
            engine.dispatch(
                "memory.retire",
                {"id": 2, "reason": "newreasonword", "status": "stale"},
                OWNER,
                OWNER_GRANT,
            )
            engine.dispatch("memory.purge", {"id": 4, "reason": "forget"}, OWNER, OWNER_GRANT)
            saved = engine.dispatch(
                "memory.save", {"kind": "fact", "summary": "After the upgrade"}, OWNER, OWNER_GRANT
            )
        assert verify_store(store.conn, store.secret).ok
        assert saved["event_id"] == 9
        purged_hash = store.conn.execute("SELECT content_hash FROM judgments WHERE id = 3")
        assert purged_hash.fetchone() == ("",)  # the bare hash of old purged text left the row

        store.conn.execute("DROP TRIGGER telegram_owner_seal_update")
        store.conn.execute("UPDATE telegram_owner SET chat_id = 666")
        problems = verify_store(store.conn, store.secret).problems
        assert "telegram_owner row 1 was altered (its seal does not match)" in problems
