"""Opening the encrypted store: pragmas, migrations, backups and the typed
errors that leave the file byte-for-byte unchanged."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import sqlcipher3

from mama_core.errors import (
    DiskFullError,
    NewerSchemaError,
    NotADatabaseError,
    StoreLockedError,
    WrongKeyError,
)
from mama_core.store import BACKUP_DIR_NAME, DbKey, Store, latest_version
from mama_core.store.connection import translate_error
from tests.conftest import file_digest


def make_store(db_path: Path, key: DbKey) -> None:
    with Store.open(db_path, key) as store:
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def test_new_store_is_encrypted_and_migrated(db_path: Path, db_key: DbKey) -> None:
    with Store.open(db_path, db_key) as store:
        assert store.schema_version == latest_version() >= 2
        conn = store.conn
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert conn.execute("PRAGMA secure_delete").fetchone()[0] == 1
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] > 0
        assert conn.execute("SELECT value FROM meta WHERE key='store_id'").fetchone()[0]
    header = db_path.read_bytes()[:16]
    assert header != b"SQLite format 3\x00"
    # Positive control: the same key opens it again with its data.
    with Store.open(db_path, db_key) as store:
        assert store.conn.execute("SELECT count(*) FROM meta").fetchone()[0] == 2


def test_reader_connection_sees_committed_rows(db_path: Path, db_key: DbKey) -> None:
    with Store.open(db_path, db_key) as store:
        store.conn.execute("INSERT INTO meta (key, value) VALUES ('probe', 'x')")
        reader = store.new_connection()
        try:
            row = reader.execute("SELECT value FROM meta WHERE key='probe'").fetchone()
            assert row == ("x",)
        finally:
            reader.close()


def test_wrong_key_is_refused_and_file_unchanged(db_path: Path, db_key: DbKey) -> None:
    make_store(db_path, db_key)
    before = file_digest(db_path)
    with pytest.raises(WrongKeyError) as info:
        Store.open(db_path, DbKey.from_secret("not the key"))
    assert info.value.code == "wrong_key"
    assert "key" in info.value.message
    assert "not the key" not in info.value.message
    assert file_digest(db_path) == before


@pytest.mark.parametrize(
    "content",
    [b"hello, I am a text file\n", b"SQLite format 3\x00" + b"\x00" * 4080],
    ids=["text", "plaintext-sqlite"],
)
def test_foreign_file_is_not_a_database(db_path: Path, db_key: DbKey, content: bytes) -> None:
    db_path.parent.mkdir(parents=True)
    db_path.write_bytes(content)
    with pytest.raises(NotADatabaseError) as info:
        Store.open(db_path, db_key)
    assert info.value.code == "not_a_database"
    assert str(db_path) in info.value.message
    assert db_path.read_bytes() == content


def test_plaintext_sqlite_database_is_refused(db_path: Path, db_key: DbKey) -> None:
    import sqlite3

    db_path.parent.mkdir(parents=True)
    plain = sqlite3.connect(db_path)
    plain.execute("CREATE TABLE t (x)")
    plain.commit()
    plain.close()
    before = file_digest(db_path)
    with pytest.raises(NotADatabaseError) as info:
        Store.open(db_path, db_key)
    assert "unencrypted" in info.value.message
    assert file_digest(db_path) == before


def test_newer_schema_is_refused_and_file_unchanged(db_path: Path, db_key: DbKey) -> None:
    make_store(db_path, db_key)
    with Store.open(db_path, db_key) as store:
        store.conn.execute(f"PRAGMA user_version = {latest_version() + 5}")
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = file_digest(db_path)
    with pytest.raises(NewerSchemaError) as info:
        Store.open(db_path, db_key)
    assert "newer" in info.value.message
    assert file_digest(db_path) == before


def test_store_held_by_another_process_reads_but_refuses_writes(
    db_path: Path, db_key: DbKey
) -> None:
    """A writer elsewhere refuses a long-running writer at start, but a command's
    store (nothing to migrate) opens and reads (WAL); its write is store_locked."""
    make_store(db_path, db_key)
    before = file_digest(db_path)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sys
                import sqlcipher3
                conn = sqlcipher3.connect({str(db_path)!r}, isolation_level=None)
                conn.execute({"PRAGMA key = " + db_key.pragma_value()!r})
                conn.execute("BEGIN IMMEDIATE")
                print("locked", flush=True)
                sys.stdin.readline()
                conn.execute("ROLLBACK")
                """
            ),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(StoreLockedError):  # a long-running writer is refused at start
            Store.open(db_path, db_key, busy_timeout_ms=200)
        with Store.open(db_path, db_key, busy_timeout_ms=200, check_writable=False) as store:
            assert store.schema_version == latest_version()
            assert store.conn.execute("SELECT count(*) FROM judgments").fetchone()[0] == 0
            with pytest.raises(sqlcipher3.Error) as raw:
                store.conn.execute("BEGIN IMMEDIATE")
            info = translate_error(raw.value, db_path)
            assert isinstance(info, StoreLockedError)
        assert "another MAMA" in info.message
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=30)
        assert holder.stdout is not None
        holder.stdout.close()
    assert file_digest(db_path) == before
    # Positive control: once the other process let go, the store opens.
    with Store.open(db_path, db_key, busy_timeout_ms=200) as store:
        assert store.schema_version == latest_version()


def test_disk_full_is_translated_and_nothing_half_written(db_path: Path, db_key: DbKey) -> None:
    with Store.open(db_path, db_key) as store:
        conn = store.conn
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages + 2}")
        conn.execute("BEGIN IMMEDIATE")
        with pytest.raises(sqlcipher3.DatabaseError) as raw:
            for i in range(200):
                conn.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (f"k{i}", "x" * 2000))
        if conn.in_transaction:  # SQLite may already have rolled back
            conn.execute("ROLLBACK")
        from mama_core.store import translate_error

        error = translate_error(raw.value, db_path)
        assert isinstance(error, DiskFullError)
        assert error.code == "disk_full"
        assert conn.execute("SELECT count(*) FROM meta WHERE key LIKE 'k%'").fetchone()[0] == 0


BEFORE_TALLY = 8
"""The schema before migration 0009 (it creates a table, so it cannot run twice)."""


def test_migration_copies_the_file_aside_first(db_path: Path, db_key: DbKey) -> None:
    make_store(db_path, db_key)
    with Store.open(db_path, db_key) as store:
        # Pretend the store is at schema 8: undo the later migrations' bumps (the last
        # ones, table rebuilds, could run again; 0009, which creates a table, cannot).
        store.conn.execute(f"PRAGMA user_version = {BEFORE_TALLY}")
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    older = file_digest(db_path)
    # Migration 0009 creates a table that exists now, so it fails: the store
    # stays at the older version and the copy made before it is intact.
    with pytest.raises(Exception) as info:
        Store.open(db_path, db_key)
    assert getattr(info.value, "code", "") == "migration_failed"
    backups = list((db_path.parent / BACKUP_DIR_NAME).glob("mama.db.v*.bak"))
    assert len(backups) == 1
    assert file_digest(backups[0]) == older
    # The backup is itself an encrypted store that opens with the same key.
    copy = db_path.parent / "restored.db"
    copy.write_bytes(backups[0].read_bytes())
    conn = sqlcipher3.connect(str(copy))
    conn.execute(f"PRAGMA key = {db_key.pragma_value()}")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == BEFORE_TALLY
    conn.close()


def test_key_never_appears_in_repr(db_key: DbKey) -> None:
    secret = db_key.reveal()
    assert secret not in repr(db_key)
    assert secret not in str(db_key)
    passphrase = DbKey.from_secret("correct horse battery")
    assert not passphrase.raw
    assert "correct horse" not in repr(passphrase)
