"""One connection factory for the encrypted store, and the translation of
SQLite/SQLCipher errors into MAMA's typed errors.

Every connection — the writer's and each reader's — is made here, so the key,
WAL, foreign keys, ``secure_delete``, ``synchronous=FULL`` and the busy timeout
are set the same way everywhere.
"""

from __future__ import annotations

import errno
import logging
import shutil
from pathlib import Path

from mama_core.errors import (
    DiskFullError,
    MamaError,
    NotADatabaseError,
    ReadOnlyError,
    StoreError,
    StoreLockedError,
    WrongKeyError,
)
from mama_core.store import sqlcipher
from mama_core.store.keys import DbKey

Connection = sqlcipher.Connection

DEFAULT_BUSY_TIMEOUT_MS = 5000
NEARLY_FULL_BYTES = 1 << 20
"""Less free space than this beside the store makes an I/O error a full disk: SQLite
reports a full disk as "disk I/O error" when it cannot grow the ``-shm`` file."""
_PLAINTEXT_HEADER = b"SQLite format 3\x00"
# SQLCipher 4 pages are 4096 bytes; an encrypted file is a whole number of them.
_PAGE_SIZE = 4096


def connect(
    path: Path,
    key: DbKey,
    *,
    readonly: bool = False,
    busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
) -> Connection:
    """Open ``path`` with ``key`` and the store's pragmas.

    The key is checked with a read before anything can write, so a wrong key
    or a foreign file raises without touching the file.
    """
    uri = f"{path.resolve().as_uri()}?mode={'ro' if readonly else 'rwc'}"
    try:
        conn = sqlcipher.connect(
            uri, uri=True, isolation_level=None, check_same_thread=False, timeout=0
        )
    except sqlcipher.Error as exc:
        raise translate_error(exc, path) from exc
    try:
        # SQLCipher otherwise prints decryption failures to stderr itself.
        conn.execute("PRAGMA cipher_log_level = NONE")
        conn.execute(f"PRAGMA key = {key.pragma_value()}")
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute("PRAGMA synchronous = FULL")
        if not readonly:
            mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
            if str(mode).lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
    except sqlcipher.Error as exc:
        conn.close()
        raise translate_error(exc, path) from exc
    return conn


def end_read(conn: Connection) -> None:
    """Close the read transaction a query left open on ``conn`` (a cursor not read to
    its end keeps one), so the connection's next read sees the latest commits."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def translate_error(exc: BaseException, path: Path) -> MamaError:
    """Map a SQLite/SQLCipher or OS error to the typed error a person can act on."""
    if isinstance(exc, MamaError):
        return exc
    text = str(exc).lower()
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    where = str(path)
    if (
        "disk is full" in text
        or name == "SQLITE_FULL"
        or (isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT))
        or (_is_io_error(text, name) and _nearly_full(path))
    ):
        return DiskFullError(
            f"The disk holding {where} is full; free some space and try again "
            "(nothing was written)."
        )
    if "not a database" in text or name == "SQLITE_NOTADB":
        return _not_a_database_or_wrong_key(path)
    if "locked" in text or "busy" in text or name in ("SQLITE_BUSY", "SQLITE_LOCKED"):
        return StoreLockedError(
            f"The memory store {where} is in use by another MAMA process; "
            "close the other MAMA (tray app, daemon or command) and try again."
        )
    if (
        "readonly" in text
        or "read-only" in text
        or "unable to open" in text
        or name in ("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM")
        or isinstance(exc, PermissionError)
    ):
        return ReadOnlyError(
            f"MAMA cannot write to {path.parent}; make the data folder writable "
            "or choose another one with MAMA_HOME or --home."
        )
    if "malformed" in text or name in ("SQLITE_CORRUPT",):
        return NotADatabaseError(
            f"The memory store {where} is damaged; restore it from a backup "
            "(see 'mama doctor' and the README)."
        )
    return StoreError(f"The memory store {where} could not be used: {exc}.")


def known_error(exc: BaseException, path: Path) -> MamaError | None:
    """``exc`` as the typed error a person can act on, if it is a known kind (the
    store's, the disk's, or already a ``MamaError``); None for anything else (a bug)."""
    if isinstance(exc, MamaError | sqlcipher.Error | OSError):
        return translate_error(exc, path)
    return None


def log_failure(
    logger: logging.Logger, what: str, exc: BaseException, path: Path, level: int = logging.WARNING
) -> None:
    """Log a failed step of background work: a known error as one line with its code
    (a damaged or busy store is not a bug; no traceback for a person to read), anything
    else with its traceback."""
    known = known_error(exc, path)
    if known is None:
        logger.error("%s", what, exc_info=exc)
    else:
        logger.log(level, "%s: %s: %s", what, known.code, known.message)


def _is_io_error(text: str, name: str) -> bool:
    return "disk i/o error" in text or name.startswith("SQLITE_IOERR")


def _nearly_full(path: Path) -> bool:
    """Whether the file system holding ``path`` has (almost) no room left."""
    try:
        return shutil.disk_usage(path.parent).free < NEARLY_FULL_BYTES
    except OSError:
        return False


def _not_a_database_or_wrong_key(path: Path) -> StoreError:
    """SQLCipher says "not a database" both for a wrong key and for a foreign
    file; the file's shape tells them apart as far as it can."""
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            head = fh.read(len(_PLAINTEXT_HEADER))
    except OSError:
        size, head = 0, b""
    if head == _PLAINTEXT_HEADER:
        return NotADatabaseError(
            f"{path} is a plain (unencrypted) SQLite file, not a MAMA store; "
            "move it away or point MAMA_HOME at another folder."
        )
    if size < _PAGE_SIZE or size % _PAGE_SIZE:
        return NotADatabaseError(
            f"{path} is not a MAMA database (it may be damaged); "
            "move it away or restore it from a backup."
        )
    return WrongKeyError(
        f"The key does not open the memory store {path}; give the key this store "
        "was created with (MAMA_DB_KEY, the OS keyring or your passphrase)."
    )
