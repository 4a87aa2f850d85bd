"""verify_store: an untouched store verifies; rewriting an event or a judgment
behind the engine's back (dropping the append-only triggers first, as an
attacker would) is reported."""

from __future__ import annotations

import pytest

from mama_core.memory import Engine, verify_store
from tests.mama_core.memory.helpers import AGENT, OWNER, OWNER_GRANT, agent_grant, save


@pytest.fixture
def busy_engine(engine: Engine) -> Engine:
    a = save(engine, "Original decision text", "decision")["judgment_id"]
    b = save(engine, "Revised decision text", "decision", replaces=[a])["judgment_id"]
    p = save(engine, "Prefer reviews", "preference", session=AGENT, grant=agent_grant())
    engine.dispatch("review.approve", {"id": p["judgment_id"]}, OWNER, OWNER_GRANT)
    engine.dispatch("memory.update_outcome", {"id": b, "outcome": "fine"}, OWNER, OWNER_GRANT)
    gone = save(engine, "To be purged")["judgment_id"]
    engine.dispatch("memory.purge", {"id": gone, "reason": "forget"}, OWNER, OWNER_GRANT)
    return engine


def test_untouched_store_verifies(busy_engine: Engine) -> None:
    reader = busy_engine.store.new_connection()
    try:
        report = verify_store(reader, busy_engine.store.secret)
    finally:
        reader.close()
    assert report.ok, report.problems
    assert report.events == 7
    assert report.judgments == 4


def test_altered_event_payload_is_found(busy_engine: Engine) -> None:
    conn = busy_engine.store.conn
    conn.execute("DROP TRIGGER events_append_only_update")
    conn.execute("UPDATE events SET payload = replace(payload, 'forget', 'routine') WHERE id = 7")
    report = verify_store(conn, busy_engine.store.secret)
    assert not report.ok
    assert "event 7 was altered (its hash does not match)" in report.problems


def test_rehashed_event_breaks_the_next_link(busy_engine: Engine) -> None:
    conn = busy_engine.store.conn
    conn.execute("DROP TRIGGER events_append_only_update")
    conn.execute("UPDATE events SET hash = ? WHERE id = 2", ("f" * 64,))
    report = verify_store(conn, busy_engine.store.secret)
    assert "event 3 does not link to the event before it" in report.problems


def test_deleted_event_is_found(busy_engine: Engine) -> None:
    conn = busy_engine.store.conn
    conn.execute("DROP TRIGGER events_append_only_delete")
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute("DELETE FROM events WHERE id = 3")
    report = verify_store(conn, busy_engine.store.secret)
    assert "events 3..3 are missing" in report.problems


def test_rewritten_judgment_text_is_found(busy_engine: Engine) -> None:
    conn = busy_engine.store.conn
    conn.execute("DROP TRIGGER judgments_text_append_only")
    conn.execute("UPDATE judgments SET summary = 'Forged decision' WHERE id = 2")
    report = verify_store(conn, busy_engine.store.secret)
    assert report.problems == [
        "the trigger judgments_text_append_only is missing from the schema (dropped?)",
        "judgment 2 was altered (its content hash does not match)",
        "judgments row 2 was altered behind the log",
    ]


def test_rewritten_text_with_a_recomputed_hash_is_still_found(busy_engine: Engine) -> None:
    from mama_core.memory.records import content_hash
    from mama_core.model import JUDGMENT_COLUMNS, Judgment

    conn = busy_engine.store.conn
    conn.execute("DROP TRIGGER judgments_text_append_only")
    conn.execute("UPDATE judgments SET summary = 'Forged decision' WHERE id = 2")
    row = conn.execute(f"SELECT {JUDGMENT_COLUMNS} FROM judgments WHERE id = 2").fetchone()
    forged = content_hash(Judgment.from_row(row).content())
    conn.execute("UPDATE judgments SET content_hash = ? WHERE id = 2", (forged,))
    report = verify_store(conn, busy_engine.store.secret)
    assert "judgment 2 was altered (its content hash does not match)" in report.problems


def test_status_or_involvement_changed_by_sql_is_found(busy_engine: Engine) -> None:
    conn = busy_engine.store.conn
    conn.execute("UPDATE judgments SET status = 'active' WHERE id = 1")
    conn.execute("UPDATE judgments SET involvement = 'owner_stated' WHERE id = 3")
    problems = verify_store(conn, busy_engine.store.secret).problems
    assert "judgment 1 is active but its events say superseded" in problems
    assert "judgment 3's involvement disagrees with its events" in problems


def test_fts_out_of_step_with_the_table_is_found(busy_engine: Engine) -> None:
    conn = busy_engine.store.conn
    conn.execute(
        "INSERT INTO judgments_fts (judgments_fts, rowid, topic, summary, details) "
        "VALUES ('delete', 2, '', 'Revised decision text', '')"
    )
    problems = verify_store(conn, busy_engine.store.secret).problems
    assert any(p.startswith("full-text index judgments_fts") for p in problems)
