"""A connector batch lands in one transaction: observations, facets, cursor, one input."""

from __future__ import annotations

import json

import pytest

from app.durable.connector_store import ConnectorStore, delta_observations
from app.durable.evidence import content_scopes
from app.durable.mailbox import InputKind, Mailbox
from app.durable.schema import APP_SERIES
from app.durable.transaction import RuntimeDb
from mama_core.memory import Engine, Grant, SessionFacts, verify_store
from mama_core.store import DbKey, Store
from tests.app.connectors.items import batch, item
from tests.app.runtime.support import ManualClock
from tests.mama_core.memory.test_purge_erasure import decrypted_file, decrypted_wal, found_words


def counts(db: RuntimeDb) -> tuple[int, int, int, int]:
    c = db.conn
    return (
        int(c.execute("SELECT count(*) FROM observations").fetchone()[0]),
        int(c.execute("SELECT count(*) FROM observation_facets").fetchone()[0]),
        int(c.execute("SELECT count(*) FROM mailbox").fetchone()[0]),
        int(c.execute("SELECT count(*) FROM connector_cursors").fetchone()[0]),
    )


def test_a_batch_stores_items_cursor_and_one_source_delta(
    app_db: RuntimeDb, clock: ManualClock
) -> None:
    store = ConnectorStore(app_db, clock)
    stored = store.store_batch("work-trello", "trello", batch(item(1), item(2), item(3)))
    assert len(stored.new_ids) == 3 and stored.input_id is not None
    assert counts(app_db) == (3, 3, 1, 1)
    assert store.cursor("work-trello") == json.dumps({"last": "action-3"})

    claimed = Mailbox(app_db, clock).claim()
    assert claimed is not None and claimed.kind is InputKind.SOURCE_DELTA
    assert delta_observations(claimed.meta) == list(stored.new_ids)
    assert "Card" not in json.dumps(claimed.meta)  # the meta names ids, never the text

    health = store.health("work-trello")
    assert health is not None and health.state == "ok" and health.items_stored == 3


def test_a_batch_read_again_stores_nothing_twice(app_db: RuntimeDb, clock: ManualClock) -> None:
    store = ConnectorStore(app_db, clock)
    store.store_batch("work-trello", "trello", batch(item(1), item(2)))
    # As after a crash before the cursor moved: the same items come again, with one new.
    again = store.store_batch("work-trello", "trello", batch(item(1), item(2), item(3)))
    assert len(again.new_ids) == 1
    assert counts(app_db) == (3, 3, 2, 1)
    # Nothing new at all: no input either (the cursor still moves).
    none = store.store_batch("work-trello", "trello", batch(item(3)))
    assert none.new_ids == () and none.input_id is None
    assert counts(app_db) == (3, 3, 2, 1)


def test_a_failure_mid_batch_leaves_nothing(app_db: RuntimeDb, clock: ManualClock) -> None:
    store = ConnectorStore(app_db, clock)
    circular: dict[str, object] = {}
    circular["self"] = circular  # cannot be serialised: fails after item 1 was inserted
    with pytest.raises(ValueError):
        store.store_batch("work-trello", "trello", batch(item(1), item(2, metadata=circular)))
    assert counts(app_db) == (0, 0, 0, 0)
    assert store.cursor("work-trello") is None
    # Positive control: the same batch without the bad item is stored whole.
    store.store_batch("work-trello", "trello", batch(item(1), item(2)))
    assert counts(app_db) == (2, 2, 1, 1)


def test_verify_passes_on_a_store_with_connector_tables(
    store: Store, app_db: RuntimeDb, clock: ManualClock
) -> None:
    ConnectorStore(app_db, clock).store_batch("work-trello", "trello", batch(item(1)))
    report = verify_store(store.conn, store.secret, None, [APP_SERIES])
    assert report.problems == []
    # Control: without the app series the check sees tables it does not know.
    bare = verify_store(store.conn, store.secret)
    assert any("connector_cursors" in p for p in bare.problems)


def test_purge_erases_an_items_text_and_metadata(
    engine: Engine, app_db: RuntimeDb, clock: ManualClock, db_key: DbKey
) -> None:
    secret_subject = "Quixotrical layoffs planned"
    stored = ConnectorStore(app_db, clock).store_batch(
        "mail",
        "trello",
        batch(
            item(1, text="the zanzibarian body", metadata={"subject": secret_subject}),
            item(2, text="a control item", metadata={"subject": "Lunch on Marmaladeday"}),
        ),
    )
    purged, kept = stored.new_ids
    engine.dispatch(
        "memory.purge",
        {"observation_id": purged, "reason": "private"},
        SessionFacts.owner_cli(),
        Grant.owner(),
    )
    rows = dict(
        (int(r[0]), (str(r[1]), str(r[2])))
        for r in app_db.conn.execute(
            "SELECT o.id, o.text, f.metadata FROM observations o "
            "JOIN observation_facets f ON f.observation_id = o.id"
        )
    )
    assert rows[purged] == ("", "{}")
    assert rows[kept] == ("a control item", json.dumps({"subject": "Lunch on Marmaladeday"}))
    # And the bytes left the file and the WAL (the control's words are still found).
    key = bytes.fromhex(db_key.reveal())
    path = engine.store.path
    pages = decrypted_file(path, key) + decrypted_wal(path.with_name(path.name + "-wal"), key)
    words = ["Quixotrical", "zanzibarian", "Marmaladeday"]
    assert found_words(pages, words) == {"Marmaladeday"}
    # And the seals still hold after the erasure (the trigger re-sealed the row).
    assert verify_store(engine.store.conn, engine.store.secret, None, [APP_SERIES]).problems == []


def test_the_delta_names_the_scopes_of_its_new_items_so_the_turn_works_only_there(
    app_db: RuntimeDb, clock: ManualClock
) -> None:
    """The runtime narrows a source-delta turn to the scopes its meta names
    (``OwnerRuntime.turn_grant``); a connector batch must name them, or its turn
    would run with the agent's whole grant (``global`` included)."""
    store = ConnectorStore(app_db, clock)
    store.store_batch("work-trello", "trello", batch(item(1)))
    both = batch(item(1), item(2, channel="Ops", scope="project:trello/Ops"))
    store.store_batch("work-trello", "trello", both)
    mailbox = Mailbox(app_db, clock)
    first, second = mailbox.claim(), mailbox.claim()
    assert first is not None and second is not None
    assert content_scopes(first.meta) == {"project:trello/Roadmap"}
    # Item 1 was stored before: only the new item's scope is named (positive control
    # that the names follow the items, not the connector).
    assert content_scopes(second.meta) == {"project:trello/Ops"}


def test_a_batch_over_stored_items_stores_only_the_new_ones(
    app_db: RuntimeDb, clock: ManualClock
) -> None:
    """The store is asked which ids it holds once per 500 of them: a batch that crosses
    that boundary, with stored and new items interleaved (and one item twice), stores
    each new item once and counts only those."""
    store = ConnectorStore(app_db, clock)
    first = store.store_batch("work-trello", "trello", batch(*(item(n) for n in range(0, 1200, 2))))
    assert len(first.new_ids) == 600
    mixed = [item(n) for n in range(1200)] + [item(1199)]  # odd ones new, one of them twice
    again = store.store_batch("work-trello", "trello", batch(*mixed))
    assert again.seen == 1201 and len(again.new_ids) == 600
    new_external = {
        str(r[0])
        for r in app_db.conn.execute(
            f"SELECT external_id FROM observations WHERE id IN ({','.join('?' * 600)})",
            again.new_ids,
        )
    }
    assert new_external == {f"action-{n}" for n in range(1, 1200, 2)}
    assert counts(app_db) == (1200, 1200, 2, 1)
    health = store.health("work-trello")
    assert health is not None and health.items_stored == 1200
    claimed = [Mailbox(app_db, clock).claim() for _ in range(2)]
    assert [delta_observations(c.meta) for c in claimed if c is not None] == [
        list(first.new_ids),
        list(again.new_ids),
    ]


def test_a_purged_item_stays_refused_in_a_batch_beside_new_ones(
    engine: Engine, app_db: RuntimeDb, clock: ManualClock
) -> None:
    """A purged item's external id is kept only as its keyed hash; a later batch that
    brings it again (a mailbox re-synced) must still find it, while a new item in the
    same batch is stored (the positive control)."""
    store = ConnectorStore(app_db, clock)
    purged, kept = store.store_batch("mail", "trello", batch(item(1), item(2))).new_ids
    engine.dispatch(
        "memory.purge",
        {"observation_id": purged, "reason": "private"},
        SessionFacts.owner_cli(),
        Grant.owner(),
    )
    erased = app_db.conn.execute(
        "SELECT external_id FROM observations WHERE id = ?", (purged,)
    ).fetchone()[0]
    assert str(erased).startswith("erased:")  # so only the keyed hash can find it

    # The purged item comes last, past the first 500 ids the store is asked about.
    again = store.store_batch("mail", "trello", batch(*(item(n) for n in range(2, 603)), item(1)))
    assert len(again.new_ids) == 600
    row = app_db.conn.execute(
        "SELECT external_id, text FROM observations WHERE id = ?", (again.new_ids[0],)
    ).fetchone()
    assert tuple(row) == ("action-3", "Anna moved 'Card 3' from Doing to Done")
    assert counts(app_db)[0] == 602
    texts = {int(r[0]): str(r[1]) for r in app_db.conn.execute("SELECT id, text FROM observations")}
    assert texts[purged] == "" and texts[kept] != ""
