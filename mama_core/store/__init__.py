"""The encrypted SQLCipher store: connections, migrations, keys."""

from mama_core.store.connection import connect, translate_error
from mama_core.store.keys import DbKey
from mama_core.store.migrations import latest_version, schema_version
from mama_core.store.store import BACKUP_DIR_NAME, STORE_FILE_NAME, Store

__all__ = [
    "BACKUP_DIR_NAME",
    "STORE_FILE_NAME",
    "DbKey",
    "Store",
    "connect",
    "latest_version",
    "schema_version",
    "translate_error",
]
