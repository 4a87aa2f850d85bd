"""The review window's Audit log tab shows a reason while it exists and "(erased)"
once a purge took it (reasons live beside the chained event, not in it)."""

from __future__ import annotations

from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.store import Store
from tests.ui.conftest import owner_save
from ui.queries import audit_page

OWNER = SessionFacts.owner_cli()


def test_audit_log_shows_reasons_then_erased(engine: Engine, store: Store) -> None:
    gone = owner_save(engine, "Releases go out on Fridays")
    kept = owner_save(engine, "Standups are at ten")
    for jid, reason in ((gone, "pangolinish change"), (kept, "wombatique moved")):
        payload = {"id": jid, "reason": reason, "status": "stale"}
        engine.dispatch("memory.retire", payload, OWNER, Grant.owner())

    def summaries() -> dict[int | None, str]:
        reader = store.new_connection()
        try:
            return {
                e.judgment_id: e.summary for e in audit_page(reader) if e.action == "memory.retire"
            }
        finally:
            reader.close()

    assert "reason: pangolinish change" in summaries()[gone]
    engine.dispatch("memory.purge", {"id": gone, "reason": "owner asked"}, OWNER, Grant.owner())
    after = summaries()
    assert "reason: (erased)" in after[gone]
    assert "reason: wombatique moved" in after[kept]
