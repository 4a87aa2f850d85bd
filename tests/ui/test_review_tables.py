"""The review window's tables as in a desktop app: a header click sorts by what the column
shows (stably, keeping the selection), several proposals are approved, rejected or
retired at once (each its own owner action and receipt, a refusal named in a summary),
and a right-click opens the buttons' actions with the buttons' rules."""

from __future__ import annotations

import asyncio
from typing import Any

from pytestqt.qtbot import QtBot

from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.store import Store
from tests.ui.conftest import (
    agent_propose,
    events_of,
    owner_save,
    status_of,
    wait_signal,
    wait_until,
)
from tests.ui.test_review_forget import observe
from tests.ui.test_review_window import bridge, drive, fill_dialog, window
from ui.qt import Qt, QtCore, QtWidgets
from ui.review.batch_actions import BatchResult
from ui.review.dialogs import ReasonDialog
from ui.review.models import ID_ROLE
from ui.review.window import TAB_AUDIT, TAB_GUIDANCE, TAB_MESSAGES, TAB_PROPOSED, ReviewWindow

__all__ = ["bridge", "window"]

CTRL = Qt.KeyboardModifier.ControlModifier
LEFT = Qt.MouseButton.LeftButton


def shown_ids(view: QtWidgets.QTableView) -> list[int]:
    """The ids in the order the view shows them."""
    model = view.model()
    return [int(model.index(row, 0).data(ID_ROLE)) for row in range(model.rowCount())]


def shown_column(view: QtWidgets.QTableView, column: int) -> list[str]:
    model = view.model()
    return [str(model.index(row, column).data()) for row in range(model.rowCount())]


def click_header(qtbot: QtBot, view: QtWidgets.QTableView, column: int) -> None:
    header = view.horizontalHeader()
    x = header.sectionViewportPosition(column) + header.sectionSize(column) // 2
    qtbot.mouseClick(header.viewport(), LEFT, pos=QtCore.QPoint(x, header.height() // 2))


NO_MODIFIER = Qt.KeyboardModifier.NoModifier


def click_row(
    qtbot: QtBot, view: QtWidgets.QTableView, row: int, modifier: Any = NO_MODIFIER
) -> None:
    rect = view.visualRect(view.model().index(row, 2))
    qtbot.mouseClick(view.viewport(), LEFT, modifier, rect.center())


def test_a_header_click_sorts_by_the_shown_values_and_keeps_the_selection(
    window: ReviewWindow, engine: Engine, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    banana = agent_propose(engine, "banana bread on Fridays")
    apple = agent_propose(engine, "Apple pie on Mondays")
    cherry = agent_propose(engine, "cherry cake on Sundays")
    view = window.views[TAB_PROPOSED]

    async def scenario() -> None:
        await wait_until(lambda: window.current_record() is not None, window.detail_shown)
        assert shown_ids(view) == [cherry, apple, banana]  # the list's own order: newest first
        shown = asyncio.ensure_future(wait_signal(window.detail_shown))
        click_row(qtbot, view, 2)
        assert await shown == (banana,)
        click_header(qtbot, view, 2)  # Summary, as shown: case does not decide
        assert shown_ids(view) == [apple, banana, cherry]
        assert window.current_record()["id"] == banana  # type: ignore[index]
        assert view.currentIndex().row() == 1 and view.selectionModel().isRowSelected(1)
        click_header(qtbot, view, 2)
        assert shown_ids(view) == [cherry, banana, apple]
        click_header(qtbot, view, 2)  # a third click: the list's own order again
        assert shown_ids(view) == [cherry, apple, banana]
        # Equal keys keep their order (a stable sort): all three are preferences.
        click_header(qtbot, view, 1)
        assert shown_ids(view) == [cherry, apple, banana]
        assert window.current_record()["id"] == banana  # type: ignore[index]

    drive(loop, window, scenario)


def test_the_audit_log_sorts_numbers_as_numbers_and_shows_whole_times(
    window: ReviewWindow, engine: Engine, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    for n in range(11):
        owner_save(engine, f"Fact number {n}")
    view = window.views[TAB_AUDIT]

    async def scenario() -> None:
        window.show_tab(TAB_AUDIT)
        await wait_until(lambda: view.model().rowCount() == 11, window.lists_updated)
        click_header(qtbot, view, 0)
        ids = [int(text) for text in shown_column(view, 0)]
        assert ids == sorted(ids) and len(ids) == 11  # as text, "10" would come before "2"
        click_header(qtbot, view, 0)
        assert [int(text) for text in shown_column(view, 0)] == sorted(ids, reverse=True)
        # "When" is as wide as the local time it shows (with its zone).
        metrics = view.fontMetrics()
        widest = max(metrics.horizontalAdvance(text) for text in shown_column(view, 1))
        assert view.columnWidth(1) > widest

    drive(loop, window, scenario)


def test_the_messages_tab_sorts_and_keeps_the_selected_message(
    window: ReviewWindow, engine: Engine, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    lunch = observe(engine, "1", "lunch at noon")
    standup = observe(engine, "2", "Standup moved to 10:00")
    budget = observe(engine, "3", "budget review on Thursday")
    view = window.messages.view

    async def scenario() -> None:
        window.show_tab(TAB_MESSAGES)
        await wait_until(lambda: len(window.messages.ids()) == 3, window.messages.loaded)
        assert window.messages.select(lunch)
        click_header(qtbot, view, 2)
        assert shown_ids_of_messages(view) == [budget, lunch, standup]
        # The pane and Purge still name the message the owner selected.
        assert window.messages.current()["id"] == lunch  # type: ignore[index]
        assert window.messages.text.toPlainText().endswith("lunch at noon")
        assert window.messages.select(standup)
        assert window.messages.current()["id"] == standup  # type: ignore[index]

    drive(loop, window, scenario)


def shown_ids_of_messages(view: QtWidgets.QTableView) -> list[int]:
    return [int(text) for text in shown_column(view, 0)]


def test_several_proposals_are_approved_each_with_its_own_receipt(
    window: ReviewWindow,
    engine: Engine,
    store: Store,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    ids = [agent_propose(engine, f"Proposal number {n}") for n in range(3)]
    untouched = agent_propose(engine, "Leave this one for later")
    view = window.views[TAB_PROPOSED]

    async def scenario() -> BatchResult:
        await wait_until(lambda: window.current_record() is not None, window.detail_shown)
        rows = [shown_ids(view).index(i) for i in ids]
        click_row(qtbot, view, rows[0])
        for row in rows[1:]:
            click_row(qtbot, view, row, CTRL)
        assert sorted(r["id"] for r in window.selected_records()) == ids
        assert window.buttons["approve"].isEnabled()
        assert not window.buttons["edit"].isEnabled()  # one at a time
        assert window.buttons["edit"].toolTip() == "Select one proposal to edit and approve it"
        done = asyncio.ensure_future(wait_signal(window.batch_done))
        qtbot.mouseClick(window.buttons["approve"], LEFT)
        (result,) = await done
        await wait_until(lambda: window.settled, window.lists_updated)
        return result

    result = drive(loop, window, scenario)

    assert result.failed == []
    receipts = [receipt for _, receipt in result.done]
    assert sorted(r.judgment_id for r in receipts) == ids
    assert len({r.event_id for r in receipts}) == 3  # three owner actions, three receipts
    for judgment_id in ids:
        assert status_of(store, judgment_id) == "active"
        last = events_of(store, judgment_id)[-1]
        assert last["action"] == "review.approve"
        assert last["actor"]["kind"] == "owner" and last["actor"]["turn"] == "ui"
    assert status_of(store, untouched) == "proposed"  # control: not selected, not decided
    assert window.message.text().startswith("Approved 3 of 3")


def test_a_refused_one_is_named_and_the_others_keep_their_receipts(
    window: ReviewWindow,
    engine: Engine,
    store: Store,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    ids = [agent_propose(engine, f"Proposal number {n}") for n in range(3)]
    view = window.views[TAB_PROPOSED]

    async def scenario() -> BatchResult:
        await wait_until(lambda: window.current_record() is not None, window.detail_shown)
        view.selectAll()
        assert len(window.selected_records()) == 3
        dialog = await fill_dialog(window, lambda: qtbot.keyClick(window, Qt.Key.Key_R))
        assert isinstance(dialog, ReasonDialog)
        dialog.reason.setText("not how I work")
        # Behind the window's back, one of them is decided already.
        engine.dispatch("review.approve", {"id": ids[1]}, SessionFacts.owner_cli(), Grant.owner())
        done = asyncio.ensure_future(wait_signal(window.batch_done))
        qtbot.mouseClick(dialog.ok_button, LEFT)
        (result,) = await done
        await wait_until(lambda: window.settled, window.lists_updated)
        return result

    result = drive(loop, window, scenario)

    assert [record["id"] for record, _ in result.failed] == [ids[1]]
    assert sorted(receipt.judgment_id for _, receipt in result.done) == [ids[0], ids[2]]
    for judgment_id in (ids[0], ids[2]):
        assert status_of(store, judgment_id) == "rejected"
        event = events_of(store, judgment_id)[-1]
        assert event["action"] == "review.reject"
        assert event["payload"]["reason"] == "not how I work"
    assert status_of(store, ids[1]) == "active"  # the refusal wrote nothing
    assert events_of(store, ids[1])[-1]["action"] == "review.approve"
    text = window.message.text()
    assert text.startswith("Rejected 2 of 3") and f"not done: #{ids[1]}:" in text


def test_the_row_menu_offers_the_buttons_with_their_rules(
    window: ReviewWindow,
    engine: Engine,
    store: Store,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    first = agent_propose(engine, "Answer in short paragraphs")
    second = agent_propose(engine, "Use metric units", applies_when="giving measurements")
    rule = owner_save(engine, "Never deploy on Fridays", kind="constraint", applies_when="release")
    view = window.views[TAB_PROPOSED]

    def items(menu: QtWidgets.QMenu) -> dict[str, QtWidgets.QWidgetAction]:
        return {a.objectName().removesuffix("_button_item"): a for a in menu.actions()}

    def open_menu(on: QtWidgets.QTableView, row: int) -> QtWidgets.QMenu:
        """Right-click the row (the view's own signal for it); the menu that opened."""
        menus: list[QtWidgets.QMenu] = []
        row_menu = window.row_menus[window.tabs.currentIndex()]
        row_menu.shown.connect(menus.append)
        on.customContextMenuRequested.emit(on.visualRect(on.model().index(row, 2)).center())
        row_menu.shown.disconnect(menus.append)
        (menu,) = menus
        return menu

    async def scenario() -> None:
        await wait_until(lambda: window.current_record() is not None, window.detail_shown)
        assert window.current_record()["id"] == second  # type: ignore[index]
        # A right-click on another row selects it; the menu follows its buttons.
        menu = open_menu(view, shown_ids(view).index(first))
        await wait_until(lambda: window.current_record()["id"] == first, window.detail_shown)  # type: ignore[index]
        menu_items = items(menu)
        assert list(menu_items) == list(window.buttons)
        for name, button in window.buttons.items():
            assert menu_items[name].isEnabled() == button.isEnabled(), name
            assert menu_items[name].toolTip() == button.toolTip(), name
        assert menu_items["approve"].isEnabled()
        assert not menu_items["retire"].isEnabled()
        assert menu_items["retire"].toolTip() == "Select an active memory to retire it"
        done = asyncio.ensure_future(wait_signal(window.action_done))
        menu_items["approve"].trigger()
        action, receipt = await done
        assert (action, receipt.judgment_id) == ("review.approve", first)
        await wait_until(lambda: window.settled, window.lists_updated)
        menu.close()
        # On active guidance the same menu retires, and does not approve.
        window.show_tab(TAB_GUIDANCE)
        guidance = window.views[TAB_GUIDANCE]
        await wait_until(lambda: window.current_status() == "active", window.detail_shown)
        menu = open_menu(guidance, shown_ids(guidance).index(rule))
        await wait_until(items(menu)["retire"].isEnabled, window.buttons_updated)
        assert not items(menu)["approve"].isEnabled()
        assert items(menu)["approve"].toolTip() == "Select a proposal to approve it"
        menu.close()

    drive(loop, window, scenario)

    assert status_of(store, first) == "active"
    assert events_of(store, first)[-1]["action"] == "review.approve"
    assert status_of(store, second) == "proposed"  # control: the row not clicked


def test_the_messages_row_menu_purges_the_message_clicked(
    window: ReviewWindow,
    engine: Engine,
    store: Store,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    lunch = observe(engine, "1", "lunch at noon")
    standup = observe(engine, "2", "Standup moved to 10:00")
    view = window.messages.view

    async def scenario() -> None:
        window.show_tab(TAB_MESSAGES)
        await wait_until(lambda: len(window.messages.ids()) == 2, window.messages.loaded)
        menus: list[QtWidgets.QMenu] = []
        window.row_menus[TAB_MESSAGES].shown.connect(menus.append)
        row = shown_ids_of_messages(view).index(lunch)
        view.customContextMenuRequested.emit(view.visualRect(view.model().index(row, 2)).center())
        (menu,) = menus
        (item,) = menu.actions()
        assert window.messages.current()["id"] == lunch  # type: ignore[index]
        assert item.isEnabled() and item.toolTip() == window.messages.purge_button.toolTip()
        opened = asyncio.ensure_future(wait_signal(window.messages.dialog_opened))
        item.trigger()
        (dialog,) = await opened
        purged = asyncio.ensure_future(wait_signal(window.messages.purged))
        dialog.accept()
        await purged

    drive(loop, window, scenario)

    assert window.messages.ids() == [standup]  # control: the other message stays
    reader = store.new_connection()
    try:
        texts = dict(reader.execute("SELECT id, text FROM observations").fetchall())
    finally:
        reader.close()
    assert texts[standup] == "Standup moved to 10:00"
    assert "lunch" not in str(texts[lunch] or "")
