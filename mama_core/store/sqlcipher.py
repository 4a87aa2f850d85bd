"""The one place that imports the SQLCipher driver.

sqlcipher3 has the standard library's ``sqlite3`` API but no type
information, so type checkers are shown ``sqlite3``'s types while the program
runs on sqlcipher3's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlite3 import (
        Connection,
        Cursor,
        DatabaseError,
        Error,
        IntegrityError,
        OperationalError,
        complete_statement,
        connect,
    )
else:
    from sqlcipher3.dbapi2 import (
        Connection,
        Cursor,
        DatabaseError,
        Error,
        IntegrityError,
        OperationalError,
        complete_statement,
        connect,
    )

__all__ = [
    "Connection",
    "Cursor",
    "DatabaseError",
    "Error",
    "IntegrityError",
    "OperationalError",
    "complete_statement",
    "connect",
]
