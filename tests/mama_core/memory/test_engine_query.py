"""``Engine.query``: a read no action answers, through the engine's own read pool (the
UI's one way to read; it keeps no connection of its own)."""

from __future__ import annotations

import pytest

from mama_core.errors import EngineError
from mama_core.memory import Engine
from mama_core.store import Store
from mama_core.store.connection import Connection
from tests.mama_core.memory.helpers import OWNER, OWNER_GRANT


def count(conn: Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM judgments").fetchone()[0])


def first_id_only(conn: Connection) -> int:
    """Reads one row of many and leaves the cursor open (a read transaction with it)."""
    return int(conn.execute("SELECT id FROM judgments ORDER BY id").fetchone()[0])


def test_a_query_sees_every_commit_even_after_one_left_its_cursor_open(
    engine: Engine, store: Store
) -> None:
    assert engine.query(count) == 0
    for summary in ("We ship on Thursdays", "Invoices go out on the 1st"):
        engine.dispatch("memory.save", {"kind": "fact", "summary": summary}, OWNER, OWNER_GRANT)
    assert engine.query(first_id_only) >= 1
    engine.dispatch(
        "memory.save", {"kind": "fact", "summary": "Standup is at 9:30"}, OWNER, OWNER_GRANT
    )
    # The pooled connection that ran first_id_only is reused: had its read transaction
    # stayed open, this would still count two.
    assert engine.query(count) == 3
    engine.close()
    with pytest.raises(EngineError):
        engine.query(count)
