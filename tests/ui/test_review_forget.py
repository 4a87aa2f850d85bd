"""Forgetting in the review window over a real store: the purge dialog lists the
messages that quote the memory (each checked to go with it), and the Messages tab
lists kept messages and purges one; the store is checked after every click."""

from __future__ import annotations

import asyncio
from typing import Any

from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.store import Store
from tests.ui.conftest import owner_save, status_of, wait_signal, wait_until
from tests.ui.test_review_window import bridge, drive, fill_dialog, window
from ui.qt import Qt
from ui.review.dialogs import PurgeDialog
from ui.review.window import TAB_ALL, TAB_MESSAGES, ReviewWindow

__all__ = ["bridge", "window"]

OWNER = (SessionFacts.owner_cli(), Grant.owner())


def observe(engine: Engine, external_id: str, text: str) -> int:
    receipt = engine.dispatch(
        "observation.record",
        {"source": "telegram", "external_id": external_id, "author": "owner", "text": text},
        *OWNER,
    )
    return int(receipt["observation_id"])


def observation_text(store: Store, observation_id: int) -> str:
    reader = store.new_connection()
    try:
        row = reader.execute(
            "SELECT text FROM observations WHERE id = ?", (observation_id,)
        ).fetchone()
    finally:
        reader.close()
    return str(row[0])


def test_purge_dialog_offers_the_quoting_messages(
    window: ReviewWindow, engine: Engine, store: Store, loop: asyncio.AbstractEventLoop
) -> None:
    said = observe(engine, "1", "/remember The vault hint is the cat's birthday")
    reply = observe(engine, "2", "Saved: the vault hint is the cat's BIRTHDAY.")
    other = observe(engine, "3", "Lunch at noon")
    fact = owner_save(engine, "The vault hint is the cat's birthday")

    async def scenario() -> dict[str, Any]:
        window.show_tab(TAB_ALL)
        await wait_until(lambda: window.current_status() == "active", window.detail_shown)
        dialog = await fill_dialog(window, window.buttons["purge"].click)
        assert isinstance(dialog, PurgeDialog)
        items = dialog.quotes.items
        listed = [items.item(r).data(Qt.ItemDataRole.UserRole) for r in range(items.count())]
        assert listed == [said, reply] and dialog.quotes.all.isChecked()
        items.item(1).setCheckState(Qt.CheckState.Unchecked)  # keep the reply
        done = asyncio.ensure_future(wait_signal(window.action_done))
        dialog.erase_button.click()
        _action, receipt = await done
        return receipt

    receipt = drive(loop, window, scenario)
    assert receipt.observations_purged == (said,)
    assert "1 message(s) erased" in window.message.text()
    assert status_of(store, fact) == "purged"
    assert observation_text(store, said) == ""
    assert "vault hint" in observation_text(store, reply)  # unchecked: kept
    assert observation_text(store, other) == "Lunch at noon"


def test_messages_tab_lists_shows_and_purges_a_message(
    window: ReviewWindow, engine: Engine, store: Store, loop: asyncio.AbstractEventLoop
) -> None:
    kept = observe(engine, "1", "Lunch at noon")
    secret = observe(engine, "2", "my locker combination is 12 34 56")

    async def scenario() -> None:
        panel = window.messages
        loaded = asyncio.ensure_future(wait_signal(panel.loaded))
        window.show_tab(TAB_MESSAGES)
        await loaded
        assert panel.ids() == [secret, kept]
        assert not window.right.isVisible()  # memories' detail pane makes way
        assert panel.select(secret)
        assert "locker combination" in panel.text.toPlainText()
        opened = asyncio.ensure_future(wait_signal(panel.dialog_opened))
        panel.purge_button.click()
        (dialog,) = await opened
        assert "locker combination" in dialog.findChild(type(panel.note), "purge_what").text()
        purged = asyncio.ensure_future(wait_signal(panel.purged))
        dialog.erase_button.click()
        await purged
        assert panel.ids() == [kept]
        window.show_tab(TAB_ALL)
        assert window.right.isVisible()

    drive(loop, window, scenario)
    assert observation_text(store, secret) == ""
    assert observation_text(store, kept) == "Lunch at noon"
