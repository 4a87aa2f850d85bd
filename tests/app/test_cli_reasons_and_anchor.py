"""The CLI shows a reason while it exists and "(erased)" once a purge took it, and
each command that writes keeps the chain anchor beside the store."""

from __future__ import annotations

import json

from app.local.chain_anchor import anchor_path
from tests.app.test_cli_memory import Mama, mama  # noqa: F401  (the fixture)


def test_history_shows_the_reason_then_erased(mama: Mama) -> None:  # noqa: F811
    kept = mama.json("remember", "Standups are at ten", "--kind", "fact")["judgment_id"]
    gone = mama.json("remember", "Releases go out on Fridays", "--kind", "decision")
    jid = gone["judgment_id"]
    mama.json("retire", str(jid), "--reason", "pangolinish change")
    mama.json("retire", str(kept), "--reason", "wombatique moved")
    before = mama.run("history", str(jid))
    assert "memory.retire: pangolinish change" in before.stdout

    retired = mama.json("purge", str(jid), "--yes")
    after = mama.run("history", str(jid))
    assert after.returncode == 0, after.stderr
    assert "memory.retire: (erased)" in after.stdout
    assert "pangolinish" not in after.stdout
    assert "memory.retire: wombatique moved" in mama.run("history", str(kept)).stdout

    anchor = json.loads(anchor_path(mama.home / "mama.db").read_text())
    assert anchor["event_id"] == retired["event_id"]
    assert mama.json("verify") == {"ok": True, "problems": []}


def test_verify_reports_a_cut_tail_through_the_anchor(mama: Mama) -> None:  # noqa: F811
    """The anchor a writing command left is what catches events cut off the end."""
    import sqlcipher3

    from mama_core.store import DbKey
    from tests.conftest import TEST_KEY_HEX

    mama.json("remember", "Invoices go out on the 1st", "--kind", "fact")
    last = mama.json("remember", "Invoices are in euros", "--kind", "fact")
    conn = sqlcipher3.connect(str(mama.home / "mama.db"), isolation_level=None)
    try:
        conn.execute("PRAGMA key = " + DbKey.from_secret(TEST_KEY_HEX).pragma_value())
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("DROP TRIGGER events_append_only_delete")
        conn.execute("DROP TRIGGER judgments_no_delete")
        jid = last["judgment_id"]
        for sql in (
            "DELETE FROM scope_bindings WHERE judgment_id = ?",
            "DELETE FROM embeddings WHERE judgment_id = ?",
            "DELETE FROM judgments WHERE id = ?",
        ):
            conn.execute(sql, (jid,))
        conn.execute("DELETE FROM receipts WHERE event_id = ?", (last["event_id"],))
        conn.execute("DELETE FROM events WHERE id = ?", (last["event_id"],))
    finally:
        conn.close()
    result = mama.run("verify", "--json")
    assert result.returncode == 5
    problems = json.loads(result.stdout)["problems"]
    assert f"event {last['event_id']} is gone" in " ".join(problems)
