"""Without a system tray (stock GNOME, some Wayland sessions) the app is not invisible:
the review window opens with the tray's menu and a one-line hint, also when the tray
goes away while MAMA runs; closing that window then quits."""

from __future__ import annotations

import asyncio

import pytest

from app.local.paths import Paths
from mama_core.embeddings import GgufEmbedder
from mama_core.memory import Engine, EngineConfig
from mama_core.store import DbKey, Store
from tests.conftest import TEST_KEY_HEX
from tests.ui.conftest import owner_save, wait_until
from tests.ui.test_desktop import run_desktop
from ui.desktop import NO_TRAY_HINT, Desktop
from ui.qt import QtWidgets


@pytest.fixture
def existing(paths: Paths, embedder: GgufEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    with (
        Store.open(paths.db, DbKey.from_secret(TEST_KEY_HEX)) as store,
        Engine(store, embedder, EngineConfig()) as engine,
    ):
        owner_save(engine, "The printer is on floor 3")
    monkeypatch.setenv("MAMA_DB_KEY", TEST_KEY_HEX)
    monkeypatch.setenv("MAMA_CACHE_DIR", str(paths.cache))


def test_without_a_tray_the_review_window_opens_with_a_hint(
    paths: Paths, existing: None, system_tray: dict[str, bool], loop: asyncio.AbstractEventLoop
) -> None:
    system_tray["available"] = False
    desktop = Desktop(paths)

    async def scenario() -> None:
        await wait_until(lambda: desktop.window is not None, desktop.review_loaded, 30)
        window = desktop.window
        assert window is not None and window.isVisible()
        assert window.message.text() == NO_TRAY_HINT
        # The tray's menu (Settings…, Quit…) is reachable from the window.
        menus = [a.text() for a in window.menuBar().actions()]
        assert menus == ["&MAMA"]
        app_menu = window.menuBar().actions()[0].menu()
        assert isinstance(app_menu, QtWidgets.QMenu)
        assert "&Chat…" in [a.text() for a in app_menu.actions()]  # the chat window too
        # Closing the window is Quit here: the app does not linger invisibly.
        window.close()
        await asyncio.wait_for(desktop._quit.wait(), 10)

    code, _ = run_desktop(loop, desktop, scenario)
    assert code == 0


def test_when_the_tray_goes_away_the_window_opens(
    paths: Paths, existing: None, system_tray: dict[str, bool], loop: asyncio.AbstractEventLoop
) -> None:
    desktop = Desktop(paths)

    async def scenario() -> None:
        # Control: with a tray, nothing opens by itself.
        desktop.tray.check_available()
        assert desktop.window is None
        system_tray["available"] = False
        desktop.tray.check_available()
        await wait_until(lambda: desktop.window is not None, desktop.review_loaded, 30)
        window = desktop.window
        assert window is not None and window.isVisible()
        assert window.message.text() == NO_TRAY_HINT

    code, _ = run_desktop(loop, desktop, scenario)
    assert code == 0
