"""The app's own tables get their schema from the app's migration series (``app/sql/``).

The core's migrations (``PRAGMA user_version``) make the memory's tables, and so
far the runtime's too; what the app adds or changes from now on is a file in
``app/sql/``, versioned in ``meta`` under ``schema:app``. The runtime brings the
series up to date when it opens its connection, after copying the store aside
when something is to be applied (as the core does before its own migrations).

``schema_problems(conn, expected_series())`` checks a store against the core's
series and the app's; ``mama verify`` passes ``expected_series()`` to
``verify_store``, so a table a file here makes is expected, not reported as extra.
"""

from __future__ import annotations

from app.durable.transaction import RuntimeDb
from mama_core.store import Store
from mama_core.store.migrations import MigrationSeries, apply_series, pending_in_series

APP_SERIES = MigrationSeries("app", "app.sql")


def expected_series() -> tuple[MigrationSeries, ...]:
    """The migration series above the core whose tables an app's store holds: what
    ``mama verify``'s schema check expects beside the core's own."""
    return (APP_SERIES,)


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
