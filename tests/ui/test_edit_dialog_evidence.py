"""The review window's Edit & approve keeps what a source's proposal rests on: the
dialog's save carries the proposal's evidence and, while it stays a commitment, its
terms (who owes whom, the due in its zone); the detail pane lists the cited items."""

from __future__ import annotations

from typing import Any

from pytestqt.qtbot import QtBot

from mama_core.memory import ActorKind, Engine, Grant, SessionFacts, TurnKind
from mama_core.store import Store
from ui.review.detail_html import record_html
from ui.review.dialogs import EditDialog

OPS = "channel:slack/#ops"
SOURCE_AGENT = SessionFacts(
    actor_kind=ActorKind.AGENT, actor_name="claude-code", turn=TurnKind.SOURCE_DELTA
)
OWNER = SessionFacts.owner_ui()


def observe(store: Store, text: str) -> int:
    conn = store.new_connection()
    try:
        oid = int(
            conn.execute(
                "INSERT INTO observations (source, external_id, author, text, received_at) "
                "VALUES ('slack:T1', 'C1/1', 'dana', ?, '2026-12-01T09:00:00.000000Z')",
                (text,),
            ).lastrowid
            or 0
        )
        conn.execute(
            "INSERT INTO observation_facets (observation_id, channel, scope, metadata) "
            "VALUES (?, '#ops', ?, '{}')",
            (oid, OPS),
        )
    finally:
        conn.close()
    return oid


def read(engine: Engine, jid: int) -> dict[str, Any]:
    return engine.dispatch("memory.read", {"id": jid}, OWNER, Grant.owner())


def test_edit_and_approve_keeps_the_evidence_and_the_terms(
    qtbot: QtBot, engine: Engine, store: Store
) -> None:
    asked = observe(store, "Dana: can you send me the deck by Friday 17:00?")
    proposal = engine.dispatch(
        "memory.save",
        {
            "kind": "commitment",
            "summary": "Send Dana the deck",
            "evidence": [f"obs:{asked}"],
            "commitment": {"owed_to": "Dana", "due": "2026-12-04T17:00:00+01:00"},
        },
        SOURCE_AGENT,
        Grant.agent([OPS], OPS),
    )["judgment_id"]
    shown = read(engine, proposal)
    html = record_html(shown)
    assert "Rests on" in html and f"obs:{asked} dana in #ops" in html

    dialog = EditDialog(None, shown["record"])
    qtbot.addWidget(dialog)
    dialog.summary.setPlainText("Send Dana the Q1 deck")
    saved = engine.dispatch("memory.save", dialog.payload(), OWNER, Grant.owner())
    record = read(engine, saved["judgment_id"])["record"]
    assert record["status"] == "active" and record["summary"] == "Send Dana the Q1 deck"
    assert record["commitment"]["owed_to"] == "Dana"
    assert record["commitment"]["due_at"] == "2026-12-04T16:00:00.000000Z"
    assert record["commitment"]["source_observations"] == [asked]
    assert read(engine, proposal)["record"]["status"] == "superseded"

    # A commitment the owner turns into a fact: no terms, still resting on Dana's message.
    other = engine.dispatch(
        "memory.save",
        {
            "kind": "commitment",
            "summary": "Decks go out on Fridays",
            "commitment": {"owed_to": "Dana", "source_observations": [asked]},
        },
        SOURCE_AGENT,
        Grant.agent([OPS], OPS),
    )["judgment_id"]
    dialog = EditDialog(None, read(engine, other)["record"])
    qtbot.addWidget(dialog)
    dialog.kind.setCurrentText("fact")
    payload = dialog.payload()
    assert "commitment" not in payload and payload["evidence"] == [f"obs:{asked}"]
    fact = engine.dispatch("memory.save", payload, OWNER, Grant.owner())
    assert read(engine, fact["judgment_id"])["record"]["provenance"]["evidence"] == [f"obs:{asked}"]
