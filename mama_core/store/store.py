"""Opening the encrypted store: checks first, then migrations, then use.

``Store.open`` refuses a wrong key, a foreign file, an empty (0-byte) file, a
newer schema and a read-only folder, each with its own error and without
writing a byte to the file. Before a migration, and for a long-running writer
(the tray, the daemon, the MCP server), it also refuses a store another process
is writing; then pending migrations are applied, after the file has been copied
aside. A command line opens with ``check_writable=False``: while another process
holds the write lock its reads go on (WAL), and a write waits or is
``store_locked``.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from pathlib import Path

from mama_core.errors import (
    MamaError,
    MigrationError,
    NewerSchemaError,
    NotADatabaseError,
    ReadOnlyError,
    StoreError,
)
from mama_core.store import sqlcipher
from mama_core.store.connection import DEFAULT_BUSY_TIMEOUT_MS, Connection, connect, translate_error
from mama_core.store.copies import BACKUP_DIR_NAME, backup_path
from mama_core.store.keys import DbKey
from mama_core.store.migrations import apply_migrations, load_migrations, schema_version
from mama_core.store.secret import SEAL_FUNCTION, StoreSecret

STORE_FILE_NAME = "mama.db"


class Store:
    """An open encrypted store: one writer connection, readers on demand."""

    def __init__(self, path: Path, key: DbKey, conn: Connection, busy_timeout_ms: int) -> None:
        self.path = path
        self._key = key
        self._busy_timeout_ms = busy_timeout_ms
        self.conn = conn
        self.backups: list[Path] = []
        self._secret: StoreSecret | None = None
        self.store_id = ""

    @classmethod
    def open(
        cls,
        path: Path,
        key: DbKey,
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        check_writable: bool = True,
    ) -> Store:
        """Open (creating if needed) and migrate the store at ``path``.

        ``check_writable`` takes and releases the write lock even with nothing to
        migrate, so a process that will write for hours fails at start, not at its
        first write; a short command that may only read passes False.
        """
        path = Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ReadOnlyError(
                f"MAMA cannot create its data folder {path.parent} ({exc.strerror}); "
                "make it writable or choose another one with MAMA_HOME or --home."
            ) from exc
        _refuse_empty_file(path)
        conn = connect(path, key, busy_timeout_ms=busy_timeout_ms)
        store = cls(path, key, conn, busy_timeout_ms)
        try:
            store._check_and_migrate(check_writable)
        except BaseException:
            conn.close()
            raise
        return store

    def _check_and_migrate(self, check_writable: bool) -> None:
        migrations = load_migrations()
        latest = migrations[-1].version if migrations else 0
        current = schema_version(self.conn)
        if current > latest:
            raise NewerSchemaError(
                f"The memory store {self.path} was written by a newer MAMA (schema "
                f"{current}, this one knows up to {latest}); update MAMA to open it."
            )
        if current > 0:
            self._unlock_secret()
        if current == latest and not check_writable:
            return
        try:
            # Take and release the write lock: a store another process is
            # writing is refused now, not halfway through a migration.
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute("ROLLBACK")
        except sqlcipher.Error as exc:
            raise translate_error(exc, self.path) from exc
        if current == 0:
            # A new store has no id yet: the seal triggers only need the function
            # to exist while the migrations run (their tables are empty).
            self.conn.create_function(SEAL_FUNCTION, -1, _no_secret_yet)
        if current == latest:
            return
        if current > 0:
            self._copy_aside(current)
        try:
            apply_migrations(self.conn, migrations)
            if current == 0:
                self._unlock_secret()
        except MigrationError as exc:
            cause = exc.__cause__
            if cause is not None and isinstance(cause, sqlcipher.Error):
                translated = translate_error(cause, self.path)
                if type(translated) is not StoreError:
                    raise translated from cause
            raise

    def _copy_aside(self, version: int) -> Path:
        """Copy the (checkpointed) file into ``backups/`` before a migration."""
        return self.copy_aside(f"v{version}", self.conn)

    def copy_aside(self, label: str, conn: Connection) -> Path:
        """Copy the file, checkpointed through ``conn``, into ``backups/`` as
        ``<name>.<label>.<time>.bak``: before a migration (the core's, or a series')."""
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
            target = backup_path(self.path, label, stamp)
            target.parent.mkdir(exist_ok=True)
            shutil.copy2(self.path, target)
        except (OSError, sqlcipher.Error) as exc:
            raise translate_error(exc, self.path) from exc
        self.backups.append(target)
        return target

    def _unlock_secret(self) -> None:
        try:
            row = self.conn.execute("SELECT value FROM meta WHERE key = 'store_id'").fetchone()
        except sqlcipher.Error as exc:
            raise translate_error(exc, self.path) from exc
        if row is None:
            raise StoreError(f"The memory store {self.path} has no store id; it is damaged.")
        self.store_id = str(row[0])
        self._secret = StoreSecret.derive(self._key, self.store_id)
        self._secret.register(self.conn)

    @property
    def secret(self) -> StoreSecret:
        """The store secret for keyed hashes (derived from the key; never stored)."""
        assert self._secret is not None, "the store is open, so its secret is known"
        return self._secret

    @property
    def schema_version(self) -> int:
        return schema_version(self.conn)

    def checkpoint_wal(self) -> None:
        """Copy the WAL into the database file and truncate it (a clean file to back up);
        raises ``sqlcipher.Error`` when another process's reader keeps it busy."""
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    def new_connection(self) -> Connection:
        """A new connection of its own to the store, keyed and ready: for reads on another
        thread, and for the writes the app's runtime makes to its own tables (it is not
        read-only)."""
        conn = connect(self.path, self._key, busy_timeout_ms=self._busy_timeout_ms)
        self.secret.register(conn)
        return conn

    def close(self) -> None:
        with contextlib.suppress(sqlcipher.Error):
            self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _no_secret_yet(*_values: object) -> str:
    raise RuntimeError("the store secret is not known before the store has an id")


def _refuse_empty_file(path: Path) -> None:
    """A 0-byte store is a truncated or clobbered file, not a new one: SQLite would
    silently start an empty store in it, losing what the owner believes is there."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    except OSError as exc:
        raise translate_error(exc, path) from exc
    if size == 0:
        raise NotADatabaseError(
            f"The memory store {path} is empty (0 bytes): it was truncated or replaced. "
            "Restore it from a backup, or move it away to start a new store."
        )


__all__ = ["BACKUP_DIR_NAME", "STORE_FILE_NAME", "MamaError", "Store"]
