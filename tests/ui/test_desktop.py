"""The desktop controller in-process (offscreen): the tray's states, menu and
notifications, the review window it opens, a clean Quit, and start failures shown
as a one-line dialog with the CLI's exit code."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from app.local.paths import Paths
from mama_core.embeddings import GgufEmbedder
from mama_core.errors import NewerSchemaError, StoreLockedError, WrongKeyError
from mama_core.memory import Engine, EngineConfig
from mama_core.store import DbKey, Store
from tests.conftest import REPO_ROOT, TEST_KEY_HEX
from tests.ui.conftest import (
    ARTIFACTS,
    agent_propose,
    owner_save,
    wait_signal,
    wait_until,
)
from ui.desktop import Desktop
from ui.icons import SIZES, TrayState, draw_mark
from ui.qt import QtCore, QtGui, QtWidgets
from ui.review.window import TAB_ALL
from ui.single_instance import SingleInstance, server_name


@pytest.fixture
def seeded(paths: Paths, embedder: GgufEmbedder) -> dict[str, int]:
    """A store with one proposal and one active rule, closed again."""
    with (
        Store.open(paths.db, DbKey.from_secret(TEST_KEY_HEX)) as store,
        Engine(store, embedder, EngineConfig()) as engine,
    ):
        proposal = agent_propose(engine, "Answer in short paragraphs")
        rule = owner_save(
            engine, "Never deploy on Fridays", kind="constraint", applies_when="releasing"
        )
    return {"proposal": proposal, "rule": rule}


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch, paths: Paths) -> None:
    monkeypatch.setenv("MAMA_DB_KEY", TEST_KEY_HEX)
    monkeypatch.setenv("MAMA_CACHE_DIR", str(paths.cache))


def run_desktop(
    loop: asyncio.AbstractEventLoop,
    desktop: Desktop,
    scenario: Callable[[], Awaitable[Any]],
    *,
    wait_ready: bool = True,
) -> tuple[int, Any]:
    """Run the app and ``scenario`` beside it on one loop; Quit; return (exit code, result)."""

    async def whole() -> tuple[int, Any]:
        ready = asyncio.ensure_future(wait_signal(desktop.ready, 30))
        app = asyncio.ensure_future(desktop.run())
        try:
            if wait_ready:
                await asyncio.wait([ready, app], return_when=asyncio.FIRST_COMPLETED)
                if app.done():
                    raise AssertionError(f"the app stopped with {app.result()}")
            result = await scenario()
        finally:
            ready.cancel()
            desktop.quit()
        return await asyncio.wait_for(app, 30), result

    return loop.run_until_complete(whole())


def test_tray_counts_and_announces_new_proposals(
    paths: Paths, seeded: dict[str, int], keyed: None, loop: asyncio.AbstractEventLoop
) -> None:
    desktop = Desktop(paths)
    tray = desktop.tray
    assert tray.state is TrayState.STARTING
    assert not tray.review_action.isEnabled()

    async def scenario() -> list[tuple[str, str]]:
        await wait_until(lambda: tray.waiting == 1, tray.changed)
        assert tray.state is TrayState.ATTENTION
        assert tray.review_action.text() == "&Review (1 waiting)"
        assert tray.icon.toolTip() == "MAMA — 1 proposal waiting"
        assert desktop.memory is not None
        engine = desktop.memory.engine
        notes: list[tuple[str, str]] = []
        desktop.notified.connect(lambda title, text: notes.append((title, text)))
        # The owner's own save is not a proposal: no notification (control below).
        await asyncio.to_thread(owner_save, engine, "The staging host is kestrel")
        # The agent proposes from another thread, as the owner runtime will.
        announced = asyncio.ensure_future(wait_signal(desktop.notified))
        worker = threading.Thread(target=agent_propose, args=(engine, "Prefer tables"))
        worker.start()
        await announced
        await asyncio.to_thread(worker.join)
        await wait_until(lambda: tray.waiting == 2, tray.changed)
        assert tray.review_action.text() == "&Review (2 waiting)"
        return notes

    code, notes = run_desktop(loop, desktop, scenario)
    assert code == 0
    assert len(notes) == 1
    title, text = notes[0]
    assert title == "New proposal to review"
    assert "Prefer tables" in text and "[preference]" in text


def test_the_balloon_counts_every_proposal_since_the_owner_last_looked(
    paths: Paths, seeded: dict[str, int], keyed: None, loop: asyncio.AbstractEventLoop
) -> None:
    """Proposals arriving in two batches (3, then 2): a balloon replaces the one before,
    so the second says 5, not 2. Once the owner opens the review window the count
    starts again (the control: a count that never resets would say 6)."""
    desktop = Desktop(paths)

    async def scenario() -> list[str]:
        assert desktop.memory is not None
        engine = desktop.memory.engine
        notes: list[str] = []
        desktop.notified.connect(lambda _title, text: notes.append(text))

        async def batch(summaries: list[str]) -> str:
            announced = asyncio.ensure_future(wait_signal(desktop.notified, 30))

            def propose_all() -> None:
                for summary in summaries:
                    agent_propose(engine, summary)

            await asyncio.to_thread(propose_all)
            _title, text = await announced
            return str(text)

        await batch(["Prefer tables", "Use metric units", "Sign with initials"])
        await wait_until(lambda: "3 new" in notes[-1], desktop.notified, 30)
        await batch(["Answer in English", "Keep replies short"])
        await wait_until(lambda: "5 new" in notes[-1], desktop.notified, 30)
        loaded = asyncio.ensure_future(wait_signal(desktop.review_loaded, 30))
        desktop.show_review()
        await loaded
        await batch(["Quote the ticket number"])
        await wait_until(lambda: "Quote the ticket number" in notes[-1], desktop.notified, 30)
        return notes

    code, notes = run_desktop(loop, desktop, scenario)
    assert code == 0
    # However the proposals fell into batches, each balloon counts all so far.
    counts = [int(note.split()[0]) for note in notes if "new proposals" in note]
    assert counts == sorted(counts) and counts[-1] == 5, notes
    assert notes[-1].endswith("Quote the ticket number")


def test_tray_menu_opens_review_and_search_and_pauses(
    paths: Paths, seeded: dict[str, int], keyed: None, loop: asyncio.AbstractEventLoop
) -> None:
    desktop = Desktop(paths)
    opened: list[QtCore.QUrl] = []
    desktop.open_url = lambda url: opened.append(url) or True  # a file manager opened it
    dialogs: list[Any] = []
    desktop.dialog_opened.connect(dialogs.append)
    pauses: list[bool] = []
    desktop.agent_pause_changed.connect(pauses.append)

    async def scenario() -> None:
        tray = desktop.tray
        loaded = asyncio.ensure_future(wait_signal(desktop.review_loaded))
        tray.review_action.trigger()
        await loaded
        window = desktop.window
        assert window is not None and window.isVisible()
        assert window.windowTitle() == "Review"
        assert window.lists[0].model.ids() == [seeded["proposal"]]
        tray.search_action.trigger()
        assert window.tabs.currentIndex() == TAB_ALL
        await wait_until(tray.pause_action.isEnabled, desktop.agent.changed)  # agent started
        tray.pause_action.trigger()
        assert tray.state is TrayState.PAUSED
        assert tray.pause_action.text() == "Resume &agent"
        tray.pause_action.trigger()
        assert tray.pause_action.text() == "&Pause agent"
        tray.folder_action.trigger()

    code, _ = run_desktop(loop, desktop, scenario)
    assert code == 0
    assert pauses == [True, False]
    assert [url.toLocalFile() for url in opened] == [str(paths.home)]
    assert dialogs == []  # opened: nothing to say
    # Quit closed the store: another process can open it now.
    with Store.open(paths.db, DbKey.from_secret(TEST_KEY_HEX)) as again:
        assert again.schema_version > 0


def test_open_data_folder_without_a_file_manager_offers_to_copy_the_path(
    paths: Paths, seeded: dict[str, int], keyed: None, loop: asyncio.AbstractEventLoop
) -> None:
    desktop = Desktop(paths)
    desktop.open_url = lambda _url: False  # no program opens folders (a bare WM)

    async def scenario() -> tuple[str, str]:
        QtGui.QGuiApplication.clipboard().setText("something else")
        opened = asyncio.ensure_future(wait_signal(desktop.dialog_opened, 30))
        desktop.tray.folder_action.trigger()
        (box,) = await opened
        assert isinstance(box, QtWidgets.QMessageBox)
        text = box.text()
        copy = next(b for b in box.buttons() if b.text() == "&Copy path")
        clipboard = QtGui.QGuiApplication.clipboard()
        copy.click()
        await wait_until(lambda: clipboard.text() != "something else", clipboard.dataChanged)
        return text, clipboard.text()

    code, (text, clipboard) = run_desktop(loop, desktop, scenario)
    assert code == 0
    assert "No program on this desktop opens folders" in text and str(paths.home) in text
    assert clipboard == str(paths.home)


def test_the_tray_menu_mnemonics_are_unique(paths: Paths, loop: asyncio.AbstractEventLoop) -> None:
    """Alt+letter picks one entry: "Pair &Telegram…" and "Se&ttings…" shared T."""
    desktop = Desktop(paths)
    letters = [
        a.text().split("&", 1)[1][0].lower() for a in desktop.tray.menu.actions() if "&" in a.text()
    ]
    assert len(letters) >= 6  # the control: the entries were read
    assert len(letters) == len(set(letters)), letters


def test_quit_from_the_tray_menu(
    paths: Paths, seeded: dict[str, int], keyed: None, loop: asyncio.AbstractEventLoop
) -> None:
    desktop = Desktop(paths)

    async def whole() -> int:
        app = asyncio.ensure_future(desktop.run())
        await wait_signal(desktop.ready, 30)
        desktop.tray.quit_action.trigger()
        return await asyncio.wait_for(app, 30)

    assert loop.run_until_complete(whole()) == 0
    assert desktop.memory is None


def test_runtime_error_goes_to_the_log_and_a_notification(
    paths: Paths, seeded: dict[str, int], keyed: None, loop: asyncio.AbstractEventLoop
) -> None:
    desktop = Desktop(paths)

    def boom() -> None:
        raise RuntimeError("a bug in a callback")

    async def scenario() -> tuple[str, str]:
        noted = asyncio.ensure_future(wait_signal(desktop.notified))
        asyncio.get_running_loop().call_soon(boom)
        title, text = await noted
        return title, text

    code, (title, text) = run_desktop(loop, desktop, scenario)
    assert code == 0
    assert title == "MAMA ran into a problem"
    assert "RuntimeError" in text and str(paths.log) in text
    assert "Traceback" not in text
    logged = paths.log.read_text("utf-8")
    assert "Traceback" in logged and "a bug in a callback" in logged


def fatal_start(
    loop: asyncio.AbstractEventLoop, desktop: Desktop
) -> tuple[int, str, QtWidgets.QMessageBox | None]:
    """Start the app, expect the fatal dialog, close it; (exit code, its text, the box)."""

    async def whole() -> tuple[int, str]:
        opened = asyncio.ensure_future(wait_signal(desktop.dialog_opened, 30))
        app = asyncio.ensure_future(desktop.run())
        (box,) = await opened
        assert isinstance(box, QtWidgets.QMessageBox)
        assert box.windowTitle() == "Cannot start"
        assert box.isVisible()
        text = box.text()
        box.button(QtWidgets.QMessageBox.StandardButton.Close).click()
        return await asyncio.wait_for(app, 30), text

    code, text = loop.run_until_complete(whole())
    return code, text, None


def test_wrong_key_is_a_dialog_and_exit_code(
    paths: Paths, seeded: dict[str, int], monkeypatch: pytest.MonkeyPatch, loop: Any
) -> None:
    monkeypatch.setenv("MAMA_DB_KEY", "4e" * 32)
    monkeypatch.setenv("MAMA_CACHE_DIR", str(paths.cache))
    code, text, _ = fatal_start(loop, Desktop(paths))
    assert code == WrongKeyError.exit_code
    assert "\n" not in text and "Traceback" not in text
    assert "key" in text.lower()


def test_store_held_by_another_process(
    paths: Paths, seeded: dict[str, int], keyed: None, loop: asyncio.AbstractEventLoop
) -> None:
    holder = Store.open(paths.db, DbKey.from_secret(TEST_KEY_HEX))
    holder.conn.execute("BEGIN IMMEDIATE")
    try:
        code, text, _ = fatal_start(loop, Desktop(paths))
    finally:
        holder.conn.execute("ROLLBACK")
        holder.close()
    assert code == StoreLockedError.exit_code
    assert "\n" not in text


def test_newer_schema_is_refused(
    paths: Paths, seeded: dict[str, int], keyed: None, loop: asyncio.AbstractEventLoop
) -> None:
    with Store.open(paths.db, DbKey.from_secret(TEST_KEY_HEX)) as store:
        store.conn.execute("PRAGMA user_version = 999")
    code, text, _ = fatal_start(loop, Desktop(paths))
    assert code == NewerSchemaError.exit_code
    assert "newer" in text.lower()


def test_passphrase_store_asks_and_retries(
    paths: Paths, embedder: GgufEmbedder, monkeypatch: pytest.MonkeyPatch, loop: Any
) -> None:
    # A store keyed by a passphrase, no MAMA_DB_KEY, no keyring: the app must ask.
    with Store.open(paths.db, DbKey("correct horse battery", raw=False)):
        pass
    monkeypatch.setenv("MAMA_CACHE_DIR", str(paths.cache))
    desktop = Desktop(paths)
    prompts: list[str] = []

    def answer(dialog: Any) -> None:
        prompts.append(dialog.labelText())
        dialog.setTextValue("wrong guess" if len(prompts) == 1 else "correct horse battery")
        QtCore.QTimer.singleShot(0, dialog.accept)

    desktop.dialog_opened.connect(answer)

    async def scenario() -> bool:
        return desktop.memory is not None

    code, opened = run_desktop(loop, desktop, scenario)
    assert (code, opened) == (0, True)
    assert len(prompts) == 2
    assert "does not open" not in prompts[0] and "does not open" in prompts[1]


def test_three_wrong_passphrases_count_down_then_offer_to_try_again(
    paths: Paths, embedder: GgufEmbedder, monkeypatch: pytest.MonkeyPatch, loop: Any
) -> None:
    """Each wrong try says how many are left; after the last, the dialog speaks of the
    passphrase (not MAMA_DB_KEY or a keyring the owner never had) and Try again asks
    afresh, and the right passphrase then opens the memory."""
    with Store.open(paths.db, DbKey("correct horse battery", raw=False)):
        pass
    monkeypatch.setenv("MAMA_CACHE_DIR", str(paths.cache))
    desktop = Desktop(paths)
    prompts: list[str] = []
    fatal: list[tuple[str, str, list[str]]] = []

    def answer(dialog: Any) -> None:
        if isinstance(dialog, QtWidgets.QMessageBox):
            names = [b.text().replace("&", "") for b in dialog.buttons()]
            fatal.append((dialog.windowTitle(), dialog.text(), names))
            again = next(b for b in dialog.buttons() if b.text() == "Try again")
            QtCore.QTimer.singleShot(0, again.click)
            return
        prompts.append(dialog.labelText())
        right = len(prompts) == 4  # three wrong, then Try again and the right one
        dialog.setTextValue("correct horse battery" if right else f"guess {len(prompts)}")
        QtCore.QTimer.singleShot(0, dialog.accept)

    desktop.dialog_opened.connect(answer)

    async def scenario() -> bool:
        return desktop.memory is not None

    code, opened = run_desktop(loop, desktop, scenario)
    assert (code, opened) == (0, True)
    assert len(prompts) == 4
    assert "does not open" not in prompts[0]
    assert "(2 tries left)" in prompts[1] and "(1 try left)" in prompts[2]
    assert "does not open" not in prompts[3]  # a fresh start after Try again
    [(title, text, buttons)] = fatal
    assert title == "Cannot start"  # the window manager adds " — MAMA"
    assert "passphrase" in text and "MAMA_DB_KEY" not in text and "keyring" not in text
    assert "\n" not in text
    assert "Try again" in buttons and "Close" in buttons


def test_closing_after_wrong_passphrases_exits_with_the_wrong_key_code(
    paths: Paths, embedder: GgufEmbedder, monkeypatch: pytest.MonkeyPatch, loop: Any
) -> None:
    with Store.open(paths.db, DbKey("correct horse battery", raw=False)):
        pass
    monkeypatch.setenv("MAMA_CACHE_DIR", str(paths.cache))
    desktop = Desktop(paths)

    def answer(dialog: Any) -> None:
        if isinstance(dialog, QtWidgets.QMessageBox):
            close = dialog.button(QtWidgets.QMessageBox.StandardButton.Close)
            QtCore.QTimer.singleShot(0, close.click)
            return
        dialog.setTextValue("not it at all")
        QtCore.QTimer.singleShot(0, dialog.accept)

    desktop.dialog_opened.connect(answer)
    code = loop.run_until_complete(asyncio.wait_for(desktop.run(), 60))
    assert code == WrongKeyError.exit_code
    assert desktop.memory is None


def test_tray_icons_for_each_state() -> None:
    """Every state draws at every size; a sheet of them is saved to look at."""
    states = list(TrayState)
    sheet = QtGui.QPixmap(len(states) * 80, 2 * 72)
    sheet.fill(QtGui.QColor("#d0d7de"))
    painter = QtGui.QPainter(sheet)
    for column, state in enumerate(states):
        for row, count in enumerate((0, 3)):
            mark = draw_mark(64, state, count)
            assert not mark.isNull() and mark.width() == 64
            painter.drawPixmap(column * 80 + 8, row * 72 + 4, mark)
    painter.end()
    for size in SIZES:
        assert draw_mark(size, TrayState.ATTENTION, 12).width() == size
    ARTIFACTS.mkdir(exist_ok=True)
    assert sheet.save(str(ARTIFACTS / "tray-icons.png"))


def test_second_launch_shows_the_first_window_and_exits(
    paths: Paths, seeded: dict[str, int], keyed: None, loop: asyncio.AbstractEventLoop
) -> None:
    instance = SingleInstance(server_name(paths.home))
    assert instance.listen()
    desktop = Desktop(paths, instance=instance)
    env = {**os.environ, "MAMA_HOME": str(paths.home), "MAMA_DB_KEY": TEST_KEY_HEX}

    async def scenario() -> subprocess.CompletedProcess[str]:
        assert desktop.window is None
        shown = asyncio.ensure_future(wait_signal(desktop.review_loaded, 60))
        second = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "ui.entry"],
            env=env,
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        await shown
        assert desktop.window is not None and desktop.window.isVisible()
        return second

    code, second = run_desktop(loop, desktop, scenario)
    assert code == 0
    assert second.returncode == 0, second.stderr
    assert "Traceback" not in second.stderr
