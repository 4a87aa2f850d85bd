"""The mailbox on a real encrypted store, with a hand-moved clock (no sleeps)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.durable.mailbox import (
    MAX_ATTEMPTS,
    RETRY_DELAYS,
    InputKind,
    InputState,
    Mailbox,
    NewInput,
    StaleClaimError,
)
from app.durable.transaction import RuntimeDb
from mama_core.store import Store
from tests.app.runtime.support import ManualClock


def owner_message(n: int, text: str = "hello") -> NewInput:
    return NewInput(
        InputKind.OWNER_MESSAGE, "telegram", f"100:{n}", text, author="owner", meta={"n": n}
    )


def source_delta(n: int, text: str = "a new card") -> NewInput:
    return NewInput(InputKind.SOURCE_DELTA, "trello", f"card-{n}", text, author="bob")


def test_post_keeps_the_text_as_an_observation_and_claim_hands_it_over(
    runtime_db: RuntimeDb, clock: ManualClock
) -> None:
    box = Mailbox(runtime_db, clock)
    posted = box.post(owner_message(1, "remember the milk"))
    assert not posted.duplicate

    row = runtime_db.conn.execute(
        "SELECT source, external_id, author, text FROM observations WHERE id = ?",
        (posted.observation_id,),
    ).fetchone()
    assert tuple(row) == ("telegram", "100:1", "owner", "remember the milk")

    claimed = box.claim()
    assert claimed is not None
    assert (claimed.id, claimed.text, claimed.kind, claimed.attempts) == (
        posted.input_id,
        "remember the milk",
        InputKind.OWNER_MESSAGE,
        1,
    )
    assert claimed.meta == {"n": 1}
    assert claimed.observation_ref == f"obs:{posted.observation_id}"
    assert box.claim() is None  # nothing else is pending

    box.complete(claimed, "done")
    assert box.state_of(claimed.id) == (InputState.DONE, 1)
    assert box.recent_exchanges() == [("remember the milk", "done")]


def test_same_source_reference_is_a_duplicate_and_never_rewrites_the_observation(
    runtime_db: RuntimeDb, clock: ManualClock
) -> None:
    box = Mailbox(runtime_db, clock)
    first = box.post(owner_message(7, "original"))
    again = box.post(owner_message(7, "tampered"))
    other = box.post(owner_message(8, "another message"))  # positive control

    assert again.duplicate and again.input_id == first.input_id
    assert not other.duplicate and other.input_id != first.input_id
    texts = runtime_db.conn.execute("SELECT text FROM observations ORDER BY id").fetchall()
    assert [t[0] for t in texts] == ["original", "another message"]
    assert box.counts() == {"pending": 2}


def test_owner_messages_are_claimed_before_older_source_deltas(
    runtime_db: RuntimeDb, clock: ManualClock
) -> None:
    box = Mailbox(runtime_db, clock)
    delta = box.post(source_delta(1))
    clock.advance(timedelta(seconds=5))
    owner = box.post(owner_message(1))

    first, second = box.claim(), box.claim()
    assert first is not None and second is not None
    assert (first.id, second.id) == (owner.input_id, delta.input_id)


def test_failures_back_off_1m_5m_30m_2h_12h_then_dead(
    runtime_db: RuntimeDb, clock: ManualClock
) -> None:
    box = Mailbox(runtime_db, clock)
    posted = box.post(owner_message(1))
    assert [d.total_seconds() for d in RETRY_DELAYS] == [60, 300, 1800, 7200, 43200]

    for attempt, delay in enumerate(RETRY_DELAYS, start=1):
        claimed = box.claim()
        assert claimed is not None and claimed.attempts == attempt
        failure = box.fail(claimed, f"backend down #{attempt}")
        assert failure.state is InputState.PENDING
        assert failure.retry_at == clock.now() + delay
        clock.advance(delay - timedelta(seconds=1))
        assert box.claim() is None, "claimed before its backoff ran out"
        clock.advance(timedelta(seconds=1))
        assert box.next_due_at() == clock.now()

    last = box.claim()
    assert last is not None and last.attempts == MAX_ATTEMPTS
    failure = box.fail(last, "still down")
    assert failure.state is InputState.DEAD and failure.retry_at is None
    clock.advance(timedelta(days=30))
    assert box.claim() is None
    assert box.state_of(posted.input_id) == (InputState.DEAD, MAX_ATTEMPTS)


def test_a_claim_abandoned_by_a_crash_is_delivered_again_once(
    store: Store, runtime_db: RuntimeDb, clock: ManualClock
) -> None:
    box = Mailbox(runtime_db, clock)
    posted = box.post(owner_message(1))
    crashed = box.claim()
    assert crashed is not None

    # The "restarted app": a new connection and a new mailbox over the same file.
    restarted_db = RuntimeDb(store.new_connection(), store.path)
    try:
        restarted = Mailbox(restarted_db, clock)
        assert restarted.release_abandoned() == [posted.input_id]
        assert restarted.release_abandoned() == []  # idempotent
        again = restarted.claim()
        assert again is not None and again.id == posted.input_id and again.attempts == 2
        assert restarted.claim() is None  # delivered once, not twice

        with pytest.raises(StaleClaimError):  # the crashed worker cannot finish it
            box.complete(crashed, "a stale reply")
        restarted.complete(again, "the one reply")
        assert restarted.recent_exchanges() == [("hello", "the one reply")]
    finally:
        restarted_db.close()


def test_an_input_that_keeps_crashing_the_app_ends_dead(
    runtime_db: RuntimeDb, clock: ManualClock
) -> None:
    box = Mailbox(runtime_db, clock)
    posted = box.post(owner_message(1))
    for _ in range(MAX_ATTEMPTS - 1):
        assert box.claim() is not None
        box.release_abandoned()
    assert box.claim() is not None
    assert box.release_abandoned() == []
    assert box.state_of(posted.input_id) == (InputState.DEAD, MAX_ATTEMPTS)


def test_a_failed_post_leaves_no_observation_behind(
    runtime_db: RuntimeDb, clock: ManualClock
) -> None:
    box = Mailbox(runtime_db, clock)
    bad = NewInput(InputKind.OWNER_MESSAGE, "telegram", "1:1", "x", meta={"bad": {1, 2}})
    with pytest.raises(TypeError):  # a set is not JSON: the transaction rolls back
        box.post(bad)
    assert runtime_db.conn.execute("SELECT count(*) FROM observations").fetchone()[0] == 0
    box.post(owner_message(1))  # positive control: the same path works
    assert runtime_db.conn.execute("SELECT count(*) FROM observations").fetchone()[0] == 1
