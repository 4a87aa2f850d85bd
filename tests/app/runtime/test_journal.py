"""The delivery journal: in order, retried when surely unsent, never sent twice."""

from __future__ import annotations

from datetime import timedelta

from app.durable.journal import DeliveryJournal, DeliveryKind, DeliveryState
from app.durable.mailbox import InputKind, Mailbox, NewInput
from app.durable.transaction import RuntimeDb
from mama_core.store import Store
from tests.app.runtime.support import ManualClock


def complete_with(box: Mailbox, n: int, reply: str, cards: tuple[int, ...] = ()) -> int:
    box.post(NewInput(InputKind.OWNER_MESSAGE, "telegram", f"1:{n}", f"msg {n}", meta={"m": n}))
    claimed = box.claim()
    assert claimed is not None
    box.complete(claimed, reply, cards)
    return claimed.id


def add_judgment(db: RuntimeDb, n: int) -> int:
    """A proposal row for the foreign keys (the engine's tables are real here)."""
    cur = db.conn.execute(
        "INSERT INTO judgments (kind, summary, status, valid_from, recorded_at, provenance, "
        "involvement, command_id, content_hash) VALUES ('fact', 's', 'proposed', 't', 't', "
        "'{}', 'agent_inferred', ?, 'h')",
        (f"c{n}",),
    )
    return int(cur.lastrowid or 0)


def test_replies_leave_in_order_and_a_retry_keeps_the_order(
    runtime_db: RuntimeDb, clock: ManualClock
) -> None:
    box, journal = Mailbox(runtime_db, clock), DeliveryJournal(runtime_db, clock)
    first_input = complete_with(box, 1, "first reply")
    complete_with(box, 2, "second reply")

    first = journal.take_next()
    assert first is not None
    assert (first.kind, first.text, first.parts_sent, first.input_meta) == (
        DeliveryKind.REPLY,
        "first reply",
        0,
        {"m": 1},
    )
    journal.retry_later(first.id, "network down", timedelta(seconds=30))
    assert journal.take_next() is None, "the second reply overtook the first"
    clock.advance(timedelta(seconds=30))

    again = journal.take_next()
    assert again is not None and again.id == first.id and again.attempts == 2
    journal.part_sent(again.id, 0, "telegram:1:500")
    assert journal.finish(again.id) is DeliveryState.SENT
    second = journal.take_next()
    assert second is not None and second.text == "second reply"
    assert journal.reply_for(first_input) == ("first reply", DeliveryState.SENT)


def test_a_part_caught_in_flight_by_a_crash_is_never_sent_again(
    store: Store, runtime_db: RuntimeDb, clock: ManualClock
) -> None:
    box, journal = Mailbox(runtime_db, clock), DeliveryJournal(runtime_db, clock)
    complete_with(box, 1, "a long reply in three parts")
    in_flight = journal.take_next()
    assert in_flight is not None
    journal.part_sent(in_flight.id, 0, "telegram:1:10")  # part 0 out, part 1 in flight

    restarted_db = RuntimeDb(store.new_connection(), store.path)
    try:
        restarted = DeliveryJournal(restarted_db, clock)
        assert restarted.release_interrupted() == [in_flight.id]
        resumed = restarted.take_next()
        assert resumed is not None and resumed.id == in_flight.id
        assert resumed.parts_sent == 2  # part 1 is skipped; part 2 still goes (positive control)
        restarted.part_sent(resumed.id, 2, "telegram:1:12")
        assert restarted.finish(resumed.id) is DeliveryState.UNCERTAIN
        assert restarted.take_next() is None
    finally:
        restarted_db.close()


def test_each_proposal_and_notice_is_queued_once_and_cards_ride_with_a_reply(
    runtime_db: RuntimeDb, clock: ManualClock
) -> None:
    box, journal = Mailbox(runtime_db, clock), DeliveryJournal(runtime_db, clock)
    jid = add_judgment(runtime_db, 1)
    assert journal.enqueue_proposal(jid) is not None
    assert journal.enqueue_proposal(jid) is None
    assert journal.enqueue_notice("backend-missing:1", "Install claude") is not None
    assert journal.enqueue_notice("backend-missing:1", "Install claude") is None
    complete_with(box, 1, "Proposals waiting:", cards=(jid,))

    taken = [journal.take_next() for _ in range(4)]
    assert [(d.kind, d.judgment_id) for d in taken if d] == [
        (DeliveryKind.PROPOSAL, jid),
        (DeliveryKind.NOTICE, None),
        (DeliveryKind.REPLY, None),
        (DeliveryKind.PROPOSAL, jid),  # the /review card, beside the first one
    ]
    assert taken[1] is not None and taken[1].text == "Install claude"


def test_a_permanent_refusal_is_kept_with_its_reason(
    runtime_db: RuntimeDb, clock: ManualClock
) -> None:
    box, journal = Mailbox(runtime_db, clock), DeliveryJournal(runtime_db, clock)
    complete_with(box, 1, "to a chat that is gone")
    complete_with(box, 2, "next")
    doomed = journal.take_next()
    assert doomed is not None
    journal.give_up(doomed.id, "Forbidden: bot was blocked by the user")
    nxt = journal.take_next()
    assert nxt is not None and nxt.text == "next"
    row = runtime_db.conn.execute(
        "SELECT state, last_error FROM deliveries WHERE id = ?", (doomed.id,)
    ).fetchone()
    assert tuple(row) == ("failed", "Forbidden: bot was blocked by the user")


def test_an_empty_reply_journals_nothing(runtime_db: RuntimeDb, clock: ManualClock) -> None:
    box, journal = Mailbox(runtime_db, clock), DeliveryJournal(runtime_db, clock)
    silent = complete_with(box, 1, "   ")
    spoken = complete_with(box, 2, "hi")
    assert journal.reply_for(silent) is None
    assert journal.reply_for(spoken) == ("hi", DeliveryState.QUEUED)
