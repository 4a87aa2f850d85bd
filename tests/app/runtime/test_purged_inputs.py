"""What the owner purged before the runtime used it is never used: an input is not
handed to the agent, a queued reply is not sent; the next one goes on."""

from __future__ import annotations

from app.durable.journal import DeliveryJournal
from app.durable.mailbox import InputKind, InputState, Mailbox, NewInput
from app.durable.transaction import RuntimeDb
from mama_core.memory import Engine, Grant, SessionFacts
from tests.app.runtime.support import ManualClock


def test_a_purged_pending_message_is_not_handed_to_the_agent(
    engine: Engine, runtime_db: RuntimeDb, clock: ManualClock
) -> None:
    box = Mailbox(runtime_db, clock)
    gone = box.post(NewInput(InputKind.OWNER_MESSAGE, "telegram", "1:1", "my pin is 4417"))
    kept = box.post(NewInput(InputKind.OWNER_MESSAGE, "telegram", "1:2", "good morning"))
    engine.dispatch(
        "memory.purge",
        {"observation_ids": [gone.observation_id], "reason": "sent by mistake"},
        SessionFacts.owner_cli(),
        Grant.owner(),
    )
    claimed = box.claim()
    assert claimed is not None and claimed.id == kept.input_id  # the control goes on
    assert claimed.text == "good morning"
    assert box.state_of(gone.input_id) == (InputState.DONE, 0)
    assert box.claim() is None


def test_a_reply_purged_while_it_waits_is_never_sent(
    engine: Engine, runtime_db: RuntimeDb, clock: ManualClock
) -> None:
    box, journal = Mailbox(runtime_db, clock), DeliveryJournal(runtime_db, clock)
    for n, reply in ((1, "your pin is 4417"), (2, "good morning to you")):
        box.post(NewInput(InputKind.OWNER_MESSAGE, "telegram", f"1:{n}", f"msg {n}"))
        claimed = box.claim()
        assert claimed is not None
        box.complete(claimed, reply)
    waiting = runtime_db.conn.execute(
        "SELECT o.id FROM deliveries d JOIN observations o ON o.id = d.observation_id "
        "WHERE o.text = 'your pin is 4417'"
    ).fetchone()[0]
    engine.dispatch(
        "memory.purge",
        {"observation_ids": [waiting], "reason": "offline, and I changed my mind"},
        SessionFacts.owner_cli(),
        Grant.owner(),
    )
    sent = journal.take_next()
    assert sent is not None and sent.text == "good morning to you"  # the control goes out
    assert journal.take_next() is None
    assert journal.counts() == {"failed": 1, "sending": 1}
