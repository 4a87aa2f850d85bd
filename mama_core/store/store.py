"""Opening the encrypted store: checks first, then migrations, then use.

``Store.open`` refuses a wrong key, a foreign file, an empty (0-byte) file, a
newer schema and a read-only folder, each with its own error and without
writing a byte to the file. Before a migration, and for a long-running writer
(the tray, the daemon, the MCP server), it also refuses a store another process
is writing; then pending migrations are applied, after the file has been copied
aside. A command line opens with ``check_writable=False``: while another process
holds the write lock its reads go on (WAL), and a write waits or is
``store_locked``.

A new store is built whole under a temporary name in the same folder, then
renamed into place, while a creation lock is held: a crash leaves at most a
temporary file (removed by the next creation), and processes started together
on a new folder make one store between them. So ``mama.db`` is either absent or
a complete, migrated store.

A 0-byte ``mama.db`` is not this MAMA's: an older one created the file before
writing it, so a crash in its first open could leave it empty. Such a file is
kept aside (``mama.db.empty-<time>``) and the store made anew, unless a store
that held data has left its traces (``held_data_traces``): a backup, a
write-ahead log with content, or what the caller names (the chain anchors, an
export's record). Then the file was truncated or replaced, and it is refused.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from filelock import FileLock

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
from mama_core.store.copies import BACKUP_DIR_NAME, backup_path, store_backups
from mama_core.store.keys import DbKey
from mama_core.store.migrations import apply_migrations, load_migrations, schema_version
from mama_core.store.secret import StoreSecret

log = logging.getLogger(__name__)

STORE_FILE_NAME = "mama.db"
EMPTY_MARK = ".empty-"
"""A 0-byte store an older MAMA left is kept aside as ``<name>.empty-<time>``."""
CREATING_MARK = ".creating-"
"""A store being built is named ``<name>.creating-<pid>``; only a creation, holding
the creation lock, touches such files (and removes those a crash left)."""


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
        held_data_marks: Sequence[Path] = (),
    ) -> Store:
        """Open (creating if needed) and migrate the store at ``path``.

        ``check_writable`` takes and releases the write lock even with nothing to
        migrate, so a process that will write for hours fails at start, not at its
        first write; a short command that may only read passes False.
        ``held_data_marks`` are files outside the core's knowledge whose presence
        shows a store here once held data (the app's chain anchors): with one of
        them, a 0-byte file is refused instead of being replaced.
        """
        path = Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ReadOnlyError(
                f"MAMA cannot create its data folder {path.parent} ({exc.strerror}); "
                "make it writable or choose another one with MAMA_HOME or --home."
            ) from exc
        if not path.exists():
            cls._create(path, key, busy_timeout_ms)
        elif _is_empty(path) and not held_data_traces(path, held_data_marks):
            cls._replace_empty(path, key, busy_timeout_ms)
        _refuse_empty_file(path, held_data_traces(path, held_data_marks))
        conn = connect(path, key, busy_timeout_ms=busy_timeout_ms)
        store = cls(path, key, conn, busy_timeout_ms)
        try:
            store._check_and_migrate(check_writable)
        except BaseException:
            conn.close()
            raise
        return store

    @classmethod
    def _create(cls, path: Path, key: DbKey, busy_timeout_ms: int) -> None:
        """Build a new store beside ``path`` and rename it into place, unless another
        process did first (it holds the creation lock while it builds)."""
        try:
            with FileLock(creation_lock_path(path), thread_local=False):
                if path.exists():
                    return
                for stale in _leftovers(path):
                    stale.unlink(missing_ok=True)
                building = path.with_name(f"{path.name}{CREATING_MARK}{os.getpid()}")
                try:
                    cls._build(building, key, busy_timeout_ms)
                    os.replace(building, path)
                    _fsync(path.parent)
                except BaseException:
                    for stale in _leftovers(path):
                        with contextlib.suppress(OSError):
                            stale.unlink()
                    raise
        except OSError as exc:
            raise translate_error(exc, path) from exc

    @classmethod
    def _replace_empty(cls, path: Path, key: DbKey, busy_timeout_ms: int) -> None:
        """Keep the 0-byte file an older MAMA's first open left (no store that held
        data left a trace) aside, and make the store in its place, under the creation
        lock: processes started together on it make one store between them."""
        try:
            with FileLock(creation_lock_path(path), thread_local=False):
                if not _is_empty(path):
                    return  # another process made the store meanwhile
                stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
                aside = path.with_name(f"{path.name}{EMPTY_MARK}{stamp}")
                os.replace(path, aside)
                for suffix in ("-wal", "-shm"):  # empty, or SQLite's shared memory
                    Path(f"{path}{suffix}").unlink(missing_ok=True)
                log.warning(
                    "the memory store %s was empty (0 bytes), as an older MAMA left it when "
                    "its first open was interrupted, and no store that held data was here: "
                    "kept it as %s and made a new store",
                    path,
                    aside.name,
                )
        except OSError as exc:
            raise translate_error(exc, path) from exc
        cls._create(path, key, busy_timeout_ms)

    @classmethod
    def _build(cls, building: Path, key: DbKey, busy_timeout_ms: int) -> None:
        """Make a complete, migrated store at ``building``, flushed to the disk."""
        conn = connect(building, key, busy_timeout_ms=busy_timeout_ms)
        store = cls(building, key, conn, busy_timeout_ms)
        try:
            store._check_and_migrate(check_writable=True)
            store.checkpoint_wal()
        finally:
            store.close()  # the last connection: SQLite removes the -wal and -shm files
        _fsync(building)

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
        if current == latest:
            return
        if current > 0:
            self._copy_aside(current)
        try:
            if current == 0:
                # The first migration gives the store its id, hence its secret: the
                # seals later migrations make are real ones from the start.
                apply_migrations(self.conn, migrations[:1])
                self._unlock_secret()
            apply_migrations(self.conn, migrations)
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


def creation_lock_path(path: Path) -> Path:
    """The lock a process holds while it creates the store at ``path`` (kept: removing a
    lock file another process may be waiting on would let two creations run at once)."""
    return path.with_name(f".{path.name}.create.lock")


def _leftovers(path: Path) -> list[Path]:
    """Temporary stores (with their -wal/-shm) a creation left: a crash, or an error."""
    return sorted(path.parent.glob(f"{path.name}{CREATING_MARK}*"))


def _fsync(path: Path) -> None:
    """Flush ``path`` (a file, or a folder after a rename) to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _is_empty(path: Path) -> bool:
    try:
        return path.stat().st_size == 0
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise translate_error(exc, path) from exc


def held_data_traces(path: Path, marks: Sequence[Path] = ()) -> list[Path]:
    """What a store at ``path`` that once held data left behind: its backups (a
    migration, or the app's first run, copied it), a write-ahead log with content, and
    those of ``marks`` that exist. None of these is written before a store holds data,
    so an empty file without them never held any."""
    wal = Path(f"{path}-wal")
    found = [*store_backups(path), *(m for m in marks if m.exists())]
    with contextlib.suppress(OSError):
        if wal.stat().st_size > 0:
            found.append(wal)
    return found


def _refuse_empty_file(path: Path, traces: Sequence[Path]) -> None:
    """A 0-byte store where a store that held data was (``traces``) was truncated or
    clobbered: SQLite would silently start an empty store in it, losing what the owner
    believes is there. (Without traces, ``Store._replace_empty`` replaced it.)"""
    if not _is_empty(path):
        return
    found = ", ".join(sorted({t.name for t in traces})) or "none"
    raise NotADatabaseError(
        f"The memory store {path} is empty (0 bytes), but a store that held data was here "
        f"(found: {found}): it was truncated or replaced. Restore it from a backup, or "
        "move it away to start a new store."
    )


__all__ = ["BACKUP_DIR_NAME", "STORE_FILE_NAME", "MamaError", "Store"]
