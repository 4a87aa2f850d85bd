"""Migration 0011 (change proposals may name a setting) on a store that already holds
changes proposed to records: the table is rebuilt with every row, the chain's digests
of those rows still match (``verify`` holds), and a settings change can then wait."""

from __future__ import annotations

from pathlib import Path

from mama_core.embeddings.base import Embedder
from mama_core.memory import Engine, EngineConfig, Grant, verify_store
from mama_core.store import DbKey, Store
from mama_core.store.expected_schema import expected_objects, schema_objects
from mama_core.store.migrations import latest_version, load_migrations
from tests.mama_core.memory.helpers import AGENT, OWNER, OWNER_GRANT

SETTINGS_MIGRATION = 11


def _proposals(store: Store) -> list[tuple[object, ...]]:
    return store.conn.execute(
        "SELECT id, action, judgment_id, payload, proposed_by, state, created_at, event_id, "
        "resolved_at, resolved_event_id FROM change_proposals ORDER BY id"
    ).fetchall()


def test_record_changes_proposed_before_0011_survive_it_and_verify(
    tmp_path: Path, db_key: DbKey, embedder: Embedder
) -> None:
    db = tmp_path / "mama.db"
    tainted = AGENT.with_taint("a mail")
    with Store.open(db, db_key) as store:
        with Engine(store, embedder, EngineConfig()) as engine:
            ids = [
                engine.dispatch(
                    "memory.save", {"kind": "commitment", "summary": s}, OWNER, OWNER_GRANT
                )["judgment_id"]
                for s in ("Meet Bob", "Review the contract")
            ]
            for jid in ids:
                engine.dispatch(
                    "commitment.close",
                    {"id": jid, "outcome": "dropped", "reason": "the mail says so"},
                    tainted,
                    Grant.agent(["global"]),
                )
            engine.dispatch("review.approve", {"id": ids[0]}, OWNER, OWNER_GRANT)
        before = _proposals(store)
        assert [row[5] for row in before] == ["approved", "pending"]  # control: rows exist
        # Put the table back as the schema before 0011 made it (0010's own rebuild).
        migration_0010 = next(m for m in load_migrations() if m.version == 10)
        store.conn.executescript(migration_0010.sql)
        store.conn.execute(f"PRAGMA user_version = {SETTINGS_MIGRATION - 1}")
        assert store.schema_version == SETTINGS_MIGRATION - 1

    with Store.open(db, db_key) as store:
        # 0011 and every migration after it ran again
        assert store.schema_version == latest_version() > SETTINGS_MIGRATION and store.backups
        assert _proposals(store) == before
        assert schema_objects(store.conn) == expected_objects(store.schema_version)
        report = verify_store(store.conn, store.secret)
        assert report.ok, report.problems
        with Engine(store, embedder, EngineConfig()) as engine:
            waiting = engine.dispatch(
                "owner.set_timezone", {"timezone": "Asia/Tokyo"}, tainted, Grant.agent(["global"])
            )
            assert waiting["proposed"] is True
        report = verify_store(store.conn, store.secret)
        assert report.ok, report.problems
