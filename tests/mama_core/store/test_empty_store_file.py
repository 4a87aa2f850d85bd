"""A 0-byte store file: left by an older MAMA whose first open was interrupted (it
created the file before writing it), it is kept aside and a new store is made; where a
store that held data left its traces (a backup, a write-ahead log with content, an
anchor the caller names), the file was truncated and is refused as before."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from mama_core.errors import NotADatabaseError
from mama_core.store import DbKey, Store
from mama_core.store.copies import backup_path


def _legacy_empty(folder: Path) -> Path:
    """The folder an older MAMA killed in its first open left: an empty store, and the
    empty write-ahead log and shared-memory files SQLite had made."""
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "mama.db"
    for name in ("mama.db", "mama.db-wal", "mama.db-shm"):
        (folder / name).write_bytes(b"")
    return db


def test_an_empty_file_an_older_mama_left_is_kept_aside_and_a_store_made(
    tmp_path: Path, db_key: DbKey, caplog: pytest.LogCaptureFixture
) -> None:
    db = _legacy_empty(tmp_path / "home")
    with caplog.at_level(logging.WARNING, logger="mama_core.store.store"):
        store = Store.open(db, db_key)
    with store:
        assert store.store_id and db.stat().st_size > 0
        store.conn.execute("INSERT INTO meta (key, value) VALUES ('probe', 'x')")
    (aside,) = sorted(db.parent.glob("mama.db.empty-*"))
    assert aside.stat().st_size == 0  # kept, not deleted
    assert any("was empty (0 bytes)" in r.getMessage() for r in caplog.records)
    assert aside.name in caplog.text
    # The store made in its place is a real one: it opens again, and keeps what it got.
    with Store.open(db, db_key) as again:
        assert again.conn.execute("SELECT value FROM meta WHERE key = 'probe'").fetchone()


def _make_backup(db: Path) -> Path:
    target = backup_path(db, "v9", "20260101T000000")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"an encrypted copy")
    return target


def _make_wal(db: Path) -> Path:
    wal = Path(f"{db}-wal")
    wal.write_bytes(b"frames of a store that held data")
    return wal


def _make_anchor(db: Path) -> Path:
    anchor = db.with_name("mama.db.anchor.json")
    anchor.write_text('{"store_id": "s", "event_id": 3, "hash": "h", "mac": "m"}')
    return anchor


@pytest.mark.parametrize(
    "trace", [_make_backup, _make_wal, _make_anchor], ids=["backup", "wal", "anchor"]
)
def test_an_empty_file_where_a_store_held_data_is_refused(
    tmp_path: Path, db_key: DbKey, trace: object
) -> None:
    db = _legacy_empty(tmp_path / "home")
    if trace is _make_wal:
        Path(f"{db}-wal").unlink()
    made = trace(db)  # type: ignore[operator]
    marks = [db.with_name("mama.db.anchor.json")]  # what the app names (its anchors)
    with pytest.raises(NotADatabaseError) as info:
        Store.open(db, db_key, held_data_marks=marks)
    assert info.value.code == "not_a_database"
    assert "empty (0 bytes)" in info.value.message and made.name in info.value.message
    assert db.stat().st_size == 0 and not list(db.parent.glob("mama.db.empty-*"))
    # Control: without that trace the same folder opens (it is the trace that refuses).
    made.unlink()
    with Store.open(db, db_key, held_data_marks=marks) as store:
        assert store.store_id
