"""The app's own migration series (``app/sql/``, ``schema:app`` in ``meta``): an old
store adopts the Telegram pairing tables the core made for it, with nothing lost or
made twice; a new store gets them too; a store from a newer app is refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.durable.schema import APP_SERIES, expected_series, open_runtime_db
from app.telegram.pairing import Pairing
from mama_core.errors import NewerSchemaError
from mama_core.memory import verify_store
from mama_core.store import DbKey, Store
from mama_core.store.expected_schema import expected_objects, schema_objects, schema_problems
from mama_core.store.migrations import load_migrations, series_version
from tests.conftest import TEST_KEY_HEX

V3 = Path(__file__).parents[2] / "mama_core" / "store" / "data" / "store_v3.db"
"""A store made by the MAMA of schema 3 (before the app had a series), with a paired owner."""


def test_an_old_store_adopts_the_pairing_tables(tmp_path: Path) -> None:
    db = tmp_path / "mama.db"
    shutil.copy(V3, db)
    with Store.open(db, DbKey.from_secret(TEST_KEY_HEX)) as store:
        owner_before = store.conn.execute("SELECT * FROM telegram_owner").fetchall()
        assert owner_before  # positive control: the old store has its paired owner
        schema_before = schema_objects(store.conn)
        assert series_version(store.conn, APP_SERIES) == 0
        core_backups = len(store.backups)

        runtime_db = open_runtime_db(store)
        try:
            assert Pairing(runtime_db).owner() is not None
        finally:
            runtime_db.close()

        latest = load_migrations(APP_SERIES.package)[-1].version
        assert series_version(store.conn, APP_SERIES) == latest >= 1
        # Adopted: the same tables, word for word, and the same rows; nothing made twice.
        # (Later files of the series add tables of their own, and change nothing else.)
        after = schema_objects(store.conn)
        assert {k: after.get(k) for k in schema_before} == schema_before
        assert after == expected_objects(store.schema_version, {APP_SERIES: latest})
        assert schema_problems(store.conn, [APP_SERIES]) == []
        assert store.conn.execute("SELECT * FROM telegram_owner").fetchall() == owner_before
        assert verify_store(store.conn, store.secret, None, [APP_SERIES]).ok
        # Copied aside before the series ran, as before the core's migrations.
        assert len(store.backups) == core_backups + 1
        assert ".app-v0." in store.backups[-1].name and store.backups[-1].exists()

        again = open_runtime_db(store)  # up to date: nothing applied, nothing copied
        again.close()
        assert len(store.backups) == core_backups + 1


def test_a_new_store_gets_the_pairing_tables(db_path: Path, db_key: DbKey) -> None:
    with Store.open(db_path, db_key) as store:
        runtime_db = open_runtime_db(store)
        try:
            code = Pairing(runtime_db).new_code()
            assert code
            rows = runtime_db.conn.execute("SELECT count(*) FROM pairing_codes").fetchone()
            assert rows == (1,)
        finally:
            runtime_db.close()
        assert series_version(store.conn, APP_SERIES) >= 1
        assert verify_store(store.conn, store.secret, series=expected_series()).ok


def test_a_store_from_a_newer_app_is_refused(db_path: Path, db_key: DbKey) -> None:
    with Store.open(db_path, db_key) as store:
        open_runtime_db(store).close()  # positive control: this app's own version opens
        latest = series_version(store.conn, APP_SERIES)
        store.conn.execute(
            "UPDATE meta SET value = ? WHERE key = ?", (str(latest + 1), APP_SERIES.version_key)
        )
        with pytest.raises(NewerSchemaError, match="newer MAMA"):
            open_runtime_db(store)
        assert series_version(store.conn, APP_SERIES) == latest + 1  # left as it was
