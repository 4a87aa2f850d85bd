"""The review window at any size: it opens within the screen's available area (the
offscreen screen is 800 x 600, as a 1600 x 1200 screen is at 200 % scaling), every
button stays reachable there, and its size, splitters and column widths come back
after a restart from ``window-state.ini`` in the data folder."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pytestqt.qtbot import QtBot

from tests.ui.test_review_window import bridge, window
from ui.bridge import EngineBridge
from ui.qt import QtCore
from ui.review.table_state import STATE_FILE
from ui.review.window import TAB_AUDIT, ReviewWindow

__all__ = ["bridge", "window"]


def test_the_window_fits_the_screen_with_every_button_reachable(
    window: ReviewWindow, qtbot: QtBot
) -> None:
    area = window.screen().availableGeometry()
    assert area.width() < 1100  # the size the window used to open at, whatever the screen
    assert area.contains(window.frameGeometry())
    assert window.minimumSizeHint().width() <= area.width()
    assert window.minimumSizeHint().height() <= area.height()
    # Every action button lies whole inside the window, not clipped by the pane.
    inside = window.rect()
    for name, button in window.buttons.items():
        assert button.isVisible(), name
        top_left = button.mapTo(window, QtCore.QPoint(0, 0))
        rect = QtCore.QRect(top_left, button.size())
        assert inside.contains(rect), name
        assert button.width() >= button.minimumSizeHint().width(), name


def test_the_button_column_keeps_a_margin_from_the_window_edge(
    window: ReviewWindow, qtbot: QtBot
) -> None:
    """The right-hand buttons and the detail pane stop short of the window's edge, as
    the tabs on the left do of theirs."""
    rights = [
        button.mapTo(window, QtCore.QPoint(button.width(), 0)).x()
        for button in window.buttons.values()
    ]
    assert len(rights) == 6  # the control: every button was measured
    detail_right = window.detail.mapTo(window, QtCore.QPoint(window.detail.width(), 0)).x()
    tabs_left = window.tabs.mapTo(window, QtCore.QPoint(0, 0)).x()
    assert window.width() - max(rights) >= 6
    assert window.width() - detail_right >= 6
    assert tabs_left >= 6


def test_a_narrow_window_keeps_the_summary_readable_and_every_tab_in_view(
    window: ReviewWindow, qtbot: QtBot
) -> None:
    """What 200 % leaves (a 1920 x 1080 screen is 960 x 540 logical pixels): the fixed columns give
    way so the summary keeps its share (it was about 90 px, "custo…"), and every tab,
    Work included, is on the tab bar, not behind scroll arrows."""
    from ui.review.data import TAB_ALL
    from ui.review.table_views import COLUMN_PADDING, STRETCH_SHARE
    from ui.review.window import TAB_PEOPLE, TAB_WORK

    window.show_tab(TAB_ALL)
    view = window.views[TAB_ALL]
    natural_kind = view.fontMetrics().horizontalAdvance("preference") + COLUMN_PADDING
    window.resize(960, 540)
    window.splitter.setSizes([576, 384])  # the window's own 3 : 2
    qtbot.waitUntil(lambda: 0 < view.viewport().width() < 576)
    summary = view.columnWidth(2)
    # Its share, unless the whole times and the titles need more: never under a quarter.
    assert summary >= int(view.viewport().width() * min(STRETCH_SHARE, 0.25)), summary
    assert summary >= 2 * view.fontMetrics().horizontalAdvance("customer"), summary
    assert view.columnWidth(1) < natural_kind  # the Kind column gave way
    assert view.columnWidth(1) >= view.fontMetrics().horizontalAdvance("Kind")
    bar = window.tabs.tabBar()
    assert window.tabs.count() == TAB_PEOPLE + 1 > TAB_WORK  # the control: Work is among them
    for tab in range(window.tabs.count()):
        assert bar.rect().contains(bar.tabRect(tab)), window.tabs.tabText(tab)
    # Room again: the columns get their widths back (a squeeze is not for good).
    window.resize(1600, 800)
    window.splitter.setSizes([1200, 400])
    qtbot.waitUntil(lambda: view.columnWidth(1) == natural_kind)


def test_size_splitter_and_columns_are_remembered(
    bridge: EngineBridge, qtbot: QtBot, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    state = tmp_path / "home" / STATE_FILE

    first = ReviewWindow(bridge, state_file=state)
    first.show()
    default_size = first.size()
    default_width = first.views[TAB_AUDIT].columnWidth(3)
    first.resize(700, 420)
    chosen = first.size()
    first.splitter.setSizes([400, 200])
    sizes = first.splitter.sizes()
    first.views[TAB_AUDIT].setColumnWidth(3, default_width + 77)
    first.close()
    assert state.exists()
    loop.run_until_complete(first.aclose())
    first.deleteLater()

    again = ReviewWindow(bridge, state_file=state)
    again.show()
    try:
        assert again.size() == chosen
        assert again.size() != default_size  # control: not just the default again
        assert again.splitter.sizes() == sizes
        assert again.views[TAB_AUDIT].columnWidth(3) == default_width + 77
    finally:
        loop.run_until_complete(again.aclose())
        again.close()
        again.deleteLater()

    fresh = ReviewWindow(bridge, state_file=tmp_path / "elsewhere" / STATE_FILE)
    try:  # control: another data folder starts from the defaults
        assert fresh.views[TAB_AUDIT].columnWidth(3) == default_width
    finally:
        loop.run_until_complete(fresh.aclose())
        fresh.deleteLater()
