"""The app's own tables get their schema from the app's migration series (``app/sql/``).

The core's migrations (``PRAGMA user_version``) make the memory's tables, and so
far the runtime's too; what the app adds or changes from now on is a file in
``app/sql/``, versioned in ``meta`` under ``schema:app``. The runtime brings the
series up to date when it opens its connection, after copying the store aside
when something is to be applied (as the core does before its own migrations).

``schema_problems(conn, [APP_SERIES])`` checks a store against both series. The
first file only adopts tables the core already made, so the core's files alone
still describe every store; before a file here makes a new object, ``mama verify``
must pass ``APP_SERIES`` to its schema check.
"""

from __future__ import annotations

from app.durable.transaction import RuntimeDb
from mama_core.store import Store
from mama_core.store.migrations import MigrationSeries, apply_series, pending_in_series

APP_SERIES = MigrationSeries("app", "app.sql")


def open_runtime_db(store: Store) -> RuntimeDb:
    """The runtime's own connection to ``store``, with the app's tables up to date.

    Blocking (a new SQLCipher connection derives its key): call it off the event loop.
    """
    conn = store.new_connection()
    db = RuntimeDb(conn, store.path)
    try:
        with db.locked() as locked:
            pending = pending_in_series(locked, APP_SERIES)
            if pending:
                store.copy_aside(f"{APP_SERIES.name}-v{pending[0].version - 1}", locked)
                apply_series(locked, APP_SERIES)
    except BaseException:
        db.close()
        raise
    return db
