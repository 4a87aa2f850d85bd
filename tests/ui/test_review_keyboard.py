"""The review window from the keyboard: Esc, Ctrl+F, Ctrl+W, Ctrl+Q and F5 do their job
(each beside a key that does not), Tab leaves a list for the buttons, Tab moves between
the fields of Edit & approve, and every action button says what it does or why not."""

from __future__ import annotations

import asyncio
from typing import Any

from pytestqt.qtbot import QtBot

from app.local.paths import Paths
from mama_core.memory import Engine
from tests.ui.conftest import agent_propose, owner_save, wait_signal, wait_until
from tests.ui.test_desktop import keyed, seeded
from tests.ui.test_review_forget import observe
from tests.ui.test_review_window import bridge, drive, fill_dialog, window
from ui.desktop import Desktop
from ui.qt import Qt
from ui.review.dialogs import EditDialog
from ui.review.window import TAB_ALL, TAB_MESSAGES, TAB_PROPOSED, ReviewWindow

__all__ = ["bridge", "keyed", "seeded", "window"]

CTRL = Qt.KeyboardModifier.ControlModifier


def test_ctrl_f_focuses_the_search_field_on_all_memories(
    window: ReviewWindow, engine: Engine, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    agent_propose(engine, "Answer in short paragraphs")

    async def scenario() -> None:
        await wait_until(lambda: window.current_record() is not None, window.detail_shown)
        window.current_view().setFocus()
        qtbot.keyClick(window.current_view(), Qt.Key.Key_F)  # control: F alone does nothing
        assert window.tabs.currentIndex() == TAB_PROPOSED
        assert window.focusWidget() is window.views[TAB_PROPOSED]
        qtbot.keyClick(window.current_view(), Qt.Key.Key_F, CTRL)
        assert window.tabs.currentIndex() == TAB_ALL
        assert window.focusWidget() is window.search_bar.search

    drive(loop, window, scenario)


def test_ctrl_w_closes_the_window(window: ReviewWindow, qtbot: QtBot) -> None:
    qtbot.keyClick(window, Qt.Key.Key_W)  # control: W alone leaves it open
    assert window.isVisible()
    qtbot.keyClick(window, Qt.Key.Key_W, CTRL)
    assert not window.isVisible()


def test_esc_closes_the_window(window: ReviewWindow, qtbot: QtBot) -> None:
    qtbot.keyClick(window, Qt.Key.Key_Q)  # control: an unbound key leaves it open
    assert window.isVisible()
    qtbot.keyClick(window, Qt.Key.Key_Escape)
    assert not window.isVisible()


def test_ctrl_q_asks_to_quit(window: ReviewWindow, qtbot: QtBot) -> None:
    asked: list[bool] = []
    window.quit_requested.connect(lambda: asked.append(True))
    qtbot.keyClick(window, Qt.Key.Key_Q)  # control: Q alone does not quit
    assert asked == []
    qtbot.keyClick(window, Qt.Key.Key_Q, CTRL)
    assert asked == [True]


def test_ctrl_q_in_the_review_window_quits_the_app(
    paths: Paths, seeded: dict[str, int], keyed: None, loop: asyncio.AbstractEventLoop
) -> None:
    desktop = Desktop(paths)

    async def whole() -> tuple[bool, int]:
        app = asyncio.ensure_future(desktop.run())
        await wait_signal(desktop.ready, 30)
        loaded = asyncio.ensure_future(wait_signal(desktop.review_loaded))
        desktop.tray.review_action.trigger()
        await loaded
        assert desktop.window is not None
        running_before = not app.done()
        QtBot.keyClick(desktop.window, Qt.Key.Key_Q, CTRL)
        return running_before, await asyncio.wait_for(app, 30)

    assert loop.run_until_complete(whole()) == (True, 0)
    assert desktop.memory is None  # quit as from the tray: the memory is closed


def test_f5_reads_the_lists_again(
    window: ReviewWindow, engine: Engine, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    """Messages arrive without a change-set: only a refresh lists a new one."""
    first = observe(engine, "1", "Lunch at noon")

    async def scenario() -> None:
        window.show_tab(TAB_MESSAGES)
        await wait_until(lambda: window.messages.ids() == [first], window.messages.loaded)
        later = observe(engine, "2", "Standup moved to 10:00")
        await wait_until(lambda: window.settled, window.lists_updated)
        qtbot.keyClick(window, Qt.Key.Key_F4)  # control: another function key
        assert window.messages.ids() == [first]
        refreshed = asyncio.ensure_future(wait_signal(window.refreshed))
        qtbot.keyClick(window, Qt.Key.Key_F5)
        await refreshed
        assert window.messages.ids() == [later, first]

    drive(loop, window, scenario)


def test_tab_leaves_the_list_for_the_buttons(
    window: ReviewWindow, engine: Engine, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    agent_propose(engine, "Answer in short paragraphs")
    agent_propose(engine, "Use metric units", applies_when="giving measurements")

    async def scenario() -> list[str]:
        await wait_until(window.buttons["approve"].isEnabled, window.detail_shown)
        view = window.current_view()
        view.setFocus()
        row = view.currentIndex().row()
        reached: list[str] = []
        for _ in range(6):
            qtbot.keyClick(window.focusWidget(), Qt.Key.Key_Tab)
            reached.append(window.focusWidget().objectName())
        assert view.currentIndex().row() == row  # Tab did not move within the list
        return reached

    reached = drive(loop, window, scenario)
    assert reached[0] != "view_0", reached  # the first Tab left the list
    assert "approve_button" in reached, reached
    assert "qt_tabwidget_tabbar" in reached, reached  # and on to the tabs


def test_tab_moves_between_the_edit_fields(
    window: ReviewWindow, engine: Engine, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    agent_propose(engine, "Answer in short paragraphs")

    async def scenario() -> list[tuple[str, str]]:
        await wait_until(window.buttons["edit"].isEnabled, window.detail_shown)
        dialog = await fill_dialog(window, window.buttons["edit"].click)
        assert isinstance(dialog, EditDialog)
        moves: list[tuple[str, str]] = []
        for field in (dialog.summary, dialog.steps, dialog.details):
            field.setFocus()
            text = field.toPlainText()
            qtbot.keyClick(field, Qt.Key.Key_Tab)
            moves.append((dialog.focusWidget().objectName(), field.toPlainText()[len(text) :]))
        finished = asyncio.ensure_future(wait_signal(window.action_finished))
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)  # Esc closes the dialog: a cancel
        assert await finished == ("memory.save",)
        assert window.current_status() == "proposed"  # nothing was saved
        return moves

    # Each Tab went to the next field and typed no tab into the text.
    assert drive(loop, window, scenario) == [
        ("applies_when", ""),
        ("details", ""),
        ("scopes", ""),
    ]


def test_every_button_says_what_it_does_or_why_not(
    window: ReviewWindow, engine: Engine, loop: asyncio.AbstractEventLoop
) -> None:
    owner_save(engine, "The staging server is called kestrel")

    async def scenario() -> dict[str, Any]:
        window.show_tab(TAB_ALL)
        await wait_until(lambda: window.current_status() == "active", window.detail_shown)
        return {name: (b.isEnabled(), b.toolTip()) for name, b in window.buttons.items()}

    tips = drive(loop, window, scenario)
    assert tips["approve"] == (False, "Select a proposal to approve it")
    assert tips["retire"][0] and tips["retire"][1].startswith("Retire this memory")
    assert all(tip for _enabled, tip in tips.values())
    mnemonics = [
        b.text().replace("&&", "").split("&")[1][0].lower() for b in window.buttons.values()
    ]
    mnemonics.append(window.messages.purge_button.text().split("&")[1][0].lower())
    assert len(set(mnemonics)) == len(mnemonics), mnemonics
