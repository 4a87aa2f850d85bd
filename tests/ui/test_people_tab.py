"""The review window's People tab over a real store: who is known, with counts; the
selected person's page (memories, commitments, messages, meetings); joining two people
and a typed address into one, checked in the store."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from pytestqt.qtbot import QtBot

from app.connectors.base import Batch, Item
from app.durable.connector_store import ConnectorStore
from app.durable.schema import open_runtime_db
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.store import Store
from tests.ui.conftest import owner_save, save_artifact, wait_signal, wait_until
from ui.bridge import EngineBridge
from ui.review.window import TAB_PEOPLE, ReviewWindow

OWNER = SessionFacts.owner_cli()
SOON = datetime.now(UTC) + timedelta(days=1)


@pytest.fixture
def bridge(engine: Engine, store: Store, loop: asyncio.AbstractEventLoop) -> Iterator[EngineBridge]:
    made = EngineBridge(engine)
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def window(
    bridge: EngineBridge, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> Iterator[ReviewWindow]:
    made = ReviewWindow(bridge)
    made.show()
    try:
        yield made
    finally:
        loop.run_until_complete(made.aclose())
        made.close()
        made.deleteLater()


@pytest.fixture
def seeded(engine: Engine, store: Store) -> None:
    owner_save(engine, "Anna prefers written updates over calls")
    owner_save(engine, "Annabel runs the Lisbon office")
    engine.dispatch(
        "memory.save",
        {
            "kind": "commitment",
            "summary": "Send the deck",
            "commitment": {"owed_by": "owner", "owed_to": "Anna"},
        },
        OWNER,
        Grant.owner(),
    )
    db = open_runtime_db(store)
    try:
        items = (
            Item(
                "slack:T1",
                "m1",
                "#ops",
                "channel:slack/#ops",
                "Anna K <anna@corp.example>",
                SOON - timedelta(days=2),
                "The budget looks fine",
            ),
            Item(
                "calendar:work",
                "e1",
                "Work",
                "channel:calendar/work",
                "Me <me@corp.example>",
                SOON - timedelta(days=2),
                "Planning",
                {
                    "kind": "event",
                    "start": SOON.isoformat(),
                    "end": (SOON + timedelta(hours=1)).isoformat(),
                    "all_day": False,
                    "attendees": [{"name": "Anna K", "email": "anna@corp.example"}],
                    "status": "confirmed",
                },
            ),
        )
        ConnectorStore(db).store_batch("work", "test", Batch(items, "c1"))
    finally:
        db.close()


def counts(window: ReviewWindow) -> dict[str, str]:
    model = window.people.model
    return {model.item(r, 0).text(): model.item(r, 1).text() for r in range(model.rowCount())}


def test_people_their_page_and_a_join(
    loop: asyncio.AbstractEventLoop, seeded: None, window: ReviewWindow, engine: Engine
) -> None:
    people = window.people

    async def scenario() -> None:
        await window.load()
        loaded = asyncio.ensure_future(wait_signal(people.loaded))
        window.show_tab(TAB_PEOPLE)
        await loaded
        assert not window.right.isVisible()  # the tab has its own pane
        assert counts(window) == {
            "Anna K": "1 message · 1 meeting",
            "Anna": "1 memory · 1 commitment",
        }
        shown = asyncio.ensure_future(wait_signal(people.detail_shown))
        assert people.select("Anna K")
        assert await shown == ("Anna K",)
        page = people.detail.toPlainText()
        assert "Also: anna@corp.example" in page
        assert "The budget looks fine" in page and "Planning" in page
        assert "Annabel" not in page
        assert not people.buttons["join"].isEnabled()  # one selected, nothing typed

        # Select both: Join makes them one, the current one's name kept.
        people.view.selectAll()
        people.select("Anna K")
        people.view.selectAll()
        assert people.selected_names() == ["Anna K", "Anna"]
        assert people.buttons["join"].isEnabled()
        acted = asyncio.ensure_future(wait_signal(people.acted, 30))
        people.buttons["join"].click()
        assert (await acted)[0] == "person.join"
        await wait_until(lambda: list(counts(window)) == ["Anna K"], people.loaded)
        assert counts(window)["Anna K"] == "1 memory · 1 commitment · 1 message · 1 meeting"
        # A typed address joins the selected person too (here: one they already have).
        people.alias.setText("a.k@home.example")
        assert people.buttons["join"].isEnabled()
        acted = asyncio.ensure_future(wait_signal(people.acted, 30))
        people.buttons["join"].click()
        await acted
        # The page is drawn again for her, with the new address.
        await wait_until(
            lambda: "a.k@home.example" in people.detail.toPlainText(), people.detail_shown
        )
        assert people.current() is not None and people.current()["name"] == "Anna K"
        save_artifact(window, "review-people.png")
        # Split a name off again: it leaves her page.
        people.alias.setText("Anna")
        assert people.buttons["split"].isEnabled()
        acted = asyncio.ensure_future(wait_signal(people.acted, 30))
        people.buttons["split"].click()
        assert (await acted)[0] == "person.split"
        await wait_until(lambda: sorted(counts(window)) == ["Anna", "Anna K"], people.loaded)
        await window.aclose()

    loop.run_until_complete(scenario())
    found = engine.dispatch("person.about", {"name": "a.k@home.example"}, OWNER, Grant.owner())
    assert found["person"]["name"] == "Anna K"
    assert found["person"]["aliases"] == ["a.k@home.example", "Anna K", "anna@corp.example"]
    assert found["memories"] == []  # "Anna" (and what names her) is someone else again
