"""The tray app runs the owner runtime: the agent answers Telegram while the tray
shows it working, pairing starts from the tray menu, Pause holds messages until
Resume, and a daemon already serving the memory keeps the agent to itself."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from filelock import FileLock

from app.local.paths import Paths
from app.local.settings import Settings
from app.serve.host import LOCK_FILE_NAME
from mama_core.embeddings import GgufEmbedder
from mama_core.memory import Engine, EngineConfig, Grant, SessionFacts
from mama_core.store import DbKey, Store
from tests.app.telegram.fake_bot_api import FakeBotApi
from tests.conftest import TEST_KEY_HEX
from tests.ui.conftest import agent_propose, wait_signal, wait_until
from tests.ui.test_desktop import run_desktop
from ui.desktop import Desktop
from ui.icons import TrayState
from ui.qt import QtGui, QtWidgets

OWNER_CHAT, OWNER_USER = 4242, 77


@pytest.fixture
def existing_store(paths: Paths, embedder: GgufEmbedder) -> None:
    with (
        Store.open(paths.db, DbKey.from_secret(TEST_KEY_HEX)) as store,
        Engine(store, embedder, EngineConfig()),
    ):
        pass


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch, paths: Paths) -> None:
    monkeypatch.setenv("MAMA_DB_KEY", TEST_KEY_HEX)
    monkeypatch.setenv("MAMA_CACHE_DIR", str(paths.cache))


def texts_to_owner(api: FakeBotApi) -> list[str]:
    return api.texts_to(OWNER_CHAT)


async def owner_says(api: FakeBotApi, text: str, replies: int = 1) -> list[str]:
    before = len(texts_to_owner(api))
    api.push_message(OWNER_CHAT, OWNER_USER, text, username="ada")
    await api.signal.until(lambda: len(texts_to_owner(api)) >= before + replies)
    return texts_to_owner(api)[before:]


def test_the_tray_runs_the_agent_pairs_telegram_and_pauses(
    paths: Paths,
    existing_store: None,
    keyed: None,
    loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
    embedder: GgufEmbedder,
) -> None:
    api = FakeBotApi()
    url = loop.run_until_complete(api.start())
    monkeypatch.setenv("MAMA_TELEGRAM_TOKEN", api.token)
    monkeypatch.setenv("MAMA_TELEGRAM_API_URL", url)
    desktop = Desktop(paths)
    tray = desktop.tray
    boxes: list[QtWidgets.QDialog] = []
    desktop.dialog_opened.connect(boxes.append)
    working: list[bool] = []

    async def scenario() -> None:
        status = tray.agent_status_action
        await wait_until(lambda: "connected as @mama_test_bot" in status.text(), tray.changed)
        assert status.text() == (
            "Agent: command mode · Telegram: connected as @mama_test_bot, not paired"
        )
        assert desktop.agent.host is not None
        desktop.agent.host.working_listeners.append(working.append)

        # Before pairing the agent hears nobody (positive control after pairing).
        api.push_message(OWNER_CHAT, OWNER_USER, "/search anything", username="ada")
        gateway = desktop.agent.host.gateway
        assert gateway is not None
        await api.signal.until(lambda: len(gateway.ignored) == 1)

        shown = asyncio.ensure_future(wait_signal(desktop.agent.pair_code_shown))
        tray.pair_action.trigger()
        (code,) = await shown
        box = boxes[-1]
        assert box.objectName() == "pair_dialog" and f"/pair {code}" in box.text()
        assert "to @mama_test_bot in Telegram" in box.text()  # the bot the code is for
        # Copy puts the message on the clipboard and leaves the window open.
        clipboard = QtGui.QGuiApplication.clipboard()
        clipboard.setText("")
        copy = box.findChild(QtWidgets.QPushButton, "pair_copy")
        assert copy is not None
        copy.click()
        await wait_until(lambda: clipboard.text() == f"/pair {code}", clipboard.dataChanged)
        assert box.isVisible()
        # Closed and opened again: the same code (one the owner may have typed already).
        box.reject()
        shown = asyncio.ensure_future(wait_signal(desktop.agent.pair_code_shown))
        tray.pair_action.trigger()
        assert await shown == (code,)
        box = boxes[-1]
        assert box.isVisible() and f"/pair {code}" in box.text()
        # The window stays while the owner pairs, and then says with whom.
        paired_in_tray = asyncio.ensure_future(wait_signal(desktop.agent.paired))
        paired = await owner_says(api, f"/pair {code}")
        assert any("Paired" in t for t in paired)
        assert await paired_in_tray == ("@ada",)
        assert box.text().startswith("Paired with @ada.")
        box.accept()
        await desktop.agent.refresh_status()
        assert status.text().endswith("paired with @ada")

        # An owner message is answered; the tray showed the agent working meanwhile.
        seen_working: list[TrayState] = []
        desktop.agent.host.working_listeners.append(lambda w: seen_working.append(tray.state))
        saved = await owner_says(api, "/remember fact The printer is on floor 3")
        assert saved[0].startswith("Saved #1 (fact, active)")
        assert working == [True, False]
        assert seen_working == [TrayState.WORKING, TrayState.IDLE]

        # Paused from the tray: the message waits, the owner is told once, nothing answered.
        tray.pause_action.trigger()
        await wait_until(lambda: "(paused)" in status.text(), tray.changed)
        assert tray.state is TrayState.PAUSED
        held = await owner_says(api, "/search printer")
        assert len(held) == 1 and "The agent is paused" in held[0]
        runtime = desktop.agent.host.runtime
        assert runtime is not None
        assert (await runtime.run_db(runtime.mailbox.counts)).get("pending") == 1
        await desktop.agent.refresh_status()  # as when the owner opens the menu
        assert status.text().startswith("Agent: command mode (paused, 1 message waiting)")
        assert working == [True, False]

        # Resumed: the held message is answered.
        before = len(texts_to_owner(api))
        tray.pause_action.trigger()
        await api.signal.until(lambda: len(texts_to_owner(api)) > before)
        assert texts_to_owner(api)[-1] == "#1 fact: The printer is on floor 3"
        assert tray.pause_action.text() == "&Pause agent"

        # An agent proposal made elsewhere (the MCP bridge, say) reaches Telegram as a card.
        assert desktop.memory is not None
        engine = desktop.memory.engine
        before = len(api.sent)
        await asyncio.to_thread(agent_propose, engine, "Prefer tables")
        await api.signal.until(lambda: len(api.sent) > before)
        card = api.sent[-1]
        assert "Prefer tables" in card["text"] and "reply_markup" in card

    try:
        code, _ = run_desktop(loop, desktop, scenario)
    finally:
        loop.run_until_complete(api.stop())
    assert code == 0
    assert desktop.agent.host is None
    # Quit released the runtime lock (a daemon may serve the memory now).
    with FileLock(paths.home / LOCK_FILE_NAME, thread_local=False, blocking=False):
        pass
    with (
        Store.open(paths.db, DbKey.from_secret(TEST_KEY_HEX)) as store,
        Engine(store, embedder, EngineConfig()) as engine,
    ):
        found = engine.dispatch("memory.read", {"id": 1}, SessionFacts.owner_cli(), Grant.owner())[
            "record"
        ]
        assert found["summary"] == "The printer is on floor 3"


def test_a_daemon_already_serving_keeps_the_agent_and_the_tray_still_reviews(
    paths: Paths,
    existing_store: None,
    keyed: None,
    loop: asyncio.AbstractEventLoop,
) -> None:
    desktop = Desktop(paths)
    tray = desktop.tray
    notes: list[tuple[str, str]] = []
    desktop.notified.connect(lambda title, text: notes.append((title, text)))

    async def scenario() -> None:
        await wait_until(lambda: bool(notes), desktop.notified)
        assert notes[0][0] == "The agent runs elsewhere"
        assert tray.agent_status_action.text() == "Agent: run by another MAMA process"
        assert not tray.pause_action.isEnabled() and not tray.pair_action.isEnabled()
        assert desktop.agent.host is None
        # Control: the memory itself works here — a proposal is counted for review.
        assert desktop.memory is not None
        await asyncio.to_thread(agent_propose, desktop.memory.engine, "Prefer tables")
        await wait_until(lambda: tray.waiting == 1, tray.changed)
        assert tray.review_action.isEnabled()

    paths.home.mkdir(parents=True, exist_ok=True)
    with FileLock(paths.home / LOCK_FILE_NAME, thread_local=False):  # "the daemon"
        code, _ = run_desktop(loop, desktop, scenario)
    assert code == 0


def test_a_refused_bot_token_shows_as_trouble_and_commands_still_queue(
    paths: Paths,
    existing_store: None,
    keyed: None,
    loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    api = FakeBotApi()
    url = loop.run_until_complete(api.start())
    monkeypatch.setenv("MAMA_TELEGRAM_TOKEN", "999:not-the-bots-token")  # Telegram says 401
    monkeypatch.setenv("MAMA_TELEGRAM_API_URL", url)
    desktop = Desktop(paths)
    tray = desktop.tray
    notes: list[tuple[str, str]] = []
    desktop.notified.connect(lambda title, text: notes.append((title, text)))

    async def scenario() -> None:
        # The trouble state may come first (a status refresh can see the refusal
        # before the connection watcher does); the notification always follows it.
        await wait_until(lambda: bool(notes), desktop.notified, timeout=30)
        assert tray.state is TrayState.TROUBLE
        assert notes[-1] == (
            "Telegram is not connected",
            "Telegram refused the bot token; set a valid one in the settings.",
        )
        assert tray.icon.toolTip().startswith("MAMA — Telegram refused the bot token")
        assert "Telegram: Telegram refused the bot token" in tray.agent_status_action.text()
        assert [c.status for c in api.calls] and all(c.status == 401 for c in api.calls)
        # The agent itself still runs here: pausing works (the menu entry is live).
        assert tray.pause_action.isEnabled() and desktop.agent.host is not None

    try:
        code, _ = run_desktop(loop, desktop, scenario)
    finally:
        loop.run_until_complete(api.stop())
    assert code == 0


def test_a_missing_agent_cli_shows_in_the_tray_and_the_owner_is_told(
    paths: Paths,
    existing_store: None,
    keyed: None,
    loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    api = FakeBotApi()
    url = loop.run_until_complete(api.start())
    monkeypatch.setenv("MAMA_TELEGRAM_TOKEN", api.token)
    monkeypatch.setenv("MAMA_TELEGRAM_API_URL", url)
    monkeypatch.setenv("MAMA_CLAUDE_BIN", str(tmp_path / "no" / "claude"))
    Settings(agent_backend="claude-code").save(paths.settings)
    desktop = Desktop(paths)
    tray = desktop.tray

    async def scenario() -> None:
        status = tray.agent_status_action
        await wait_until(lambda: "connected as" in status.text(), tray.changed, timeout=30)
        # Known before any turn: what is missing and how to install it.
        assert status.text().startswith("Agent: Claude Code (cannot run; commands still work)")
        assert tray.state is TrayState.TROUBLE
        tooltip = tray.icon.toolTip()
        assert "npm install -g @anthropic-ai/claude-code" in tooltip
        assert "MAMA_CLAUDE_BIN" in tooltip
        assert desktop.agent.host is not None
        code = await desktop.agent.host.new_pair_code()
        await owner_says(api, f"/pair {code}")

        answer = await owner_says(api, "What is on my plate today?")
        assert "Claude Code is not installed here" in answer[0]
        await wait_until(lambda: tray.state is TrayState.TROUBLE, tray.changed)
        assert "Claude Code is not installed here" in tray.icon.toolTip()
        assert status.text().startswith("Agent: Claude Code (cannot run; commands still work)")
        # Commands still work without the CLI (the control).
        listed = await owner_says(api, "/search plate")
        assert "Nothing found." in listed[-1]

    try:
        code, _ = run_desktop(loop, desktop, scenario)
    finally:
        loop.run_until_complete(api.stop())
    assert code == 0


def test_a_pause_from_outside_the_tray_shows_in_the_tray(
    paths: Paths, existing_store: None, keyed: None, loop: asyncio.AbstractEventLoop
) -> None:
    """`mama agent pause` reaches the runtime through its watcher; the tray follows."""
    desktop = Desktop(paths)
    tray = desktop.tray

    async def scenario() -> None:
        await wait_until(tray.pause_action.isEnabled, desktop.agent.changed)
        host = desktop.agent.host
        assert host is not None and host.runtime is not None
        assert tray.state is not TrayState.PAUSED  # the control
        host.runtime.pause()  # what the watcher does when the flag appears
        await wait_until(lambda: tray.state is TrayState.PAUSED, tray.changed)
        assert tray.pause_action.text() == "Resume &agent"
        assert "(paused)" in tray.agent_status_action.text()

    code, _ = run_desktop(loop, desktop, scenario)
    assert code == 0


def test_the_pair_window_of_a_paired_bot_offers_unpair_and_tells_the_old_chat(
    paths: Paths,
    existing_store: None,
    keyed: None,
    loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    api = FakeBotApi()
    url = loop.run_until_complete(api.start())
    monkeypatch.setenv("MAMA_TELEGRAM_TOKEN", api.token)
    monkeypatch.setenv("MAMA_TELEGRAM_API_URL", url)
    desktop = Desktop(paths)
    tray = desktop.tray
    boxes: list[QtWidgets.QDialog] = []
    desktop.dialog_opened.connect(boxes.append)

    async def open_pair_window() -> QtWidgets.QMessageBox:
        before = len(boxes)
        tray.pair_action.trigger()
        await wait_until(lambda: len(boxes) > before, desktop.dialog_opened)
        box = boxes[-1]
        assert isinstance(box, QtWidgets.QMessageBox)
        return box

    def button(box: QtWidgets.QMessageBox, label: str) -> QtWidgets.QAbstractButton:
        return next(b for b in box.buttons() if b.text().replace("&", "") == label)

    async def scenario() -> None:
        status = tray.agent_status_action
        await wait_until(lambda: "connected as" in status.text(), tray.changed, timeout=30)
        assert desktop.agent.host is not None
        code = await desktop.agent.host.new_pair_code()
        await owner_says(api, f"/pair {code}")

        # Paired: the window shows no code, only who is paired and an Unpair button.
        box = await open_pair_window()
        assert box.text().startswith("Telegram is paired with @ada")
        assert "/pair" not in box.text()
        button(box, "Close").click()

        box = await open_pair_window()  # Close unpaired nothing: still paired
        assert box.text().startswith("Telegram is paired with @ada")
        unpaired = asyncio.ensure_future(wait_signal(desktop.agent.unpaired))
        button(box, "Unpair").click()
        assert await unpaired == ("@ada",)
        assert "unpaired from this chat" in texts_to_owner(api)[-1]
        assert (await desktop.agent.host.paired_owner()) is None
        assert status.text().endswith("not paired")

        # Positive control: now the window gives a code again.
        shown = asyncio.ensure_future(wait_signal(desktop.agent.pair_code_shown))
        box = await open_pair_window()
        (code,) = await shown
        assert f"/pair {code}" in box.text()
        box.accept()

    try:
        code, _ = run_desktop(loop, desktop, scenario)
    finally:
        loop.run_until_complete(api.stop())
    assert code == 0


def test_after_a_model_change_the_agent_and_telegram_use_the_new_engine(
    paths: Paths,
    existing_store: None,
    keyed: None,
    loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
    embedder: GgufEmbedder,
) -> None:
    """Settings swaps the embedding model (and so the engine): the runtime and the bot
    follow, so /remember after the swap is saved, not "The memory engine is closed"."""
    from tests.ui.test_settings import edit_settings

    api = FakeBotApi()
    url = loop.run_until_complete(api.start())
    monkeypatch.setenv("MAMA_TELEGRAM_TOKEN", api.token)
    monkeypatch.setenv("MAMA_TELEGRAM_API_URL", url)
    desktop = Desktop(paths)
    status = desktop.tray.agent_status_action

    async def scenario() -> None:
        await wait_until(lambda: "connected as" in status.text(), desktop.tray.changed)
        host = desktop.agent.host
        assert host is not None and desktop.memory is not None
        await owner_says(api, f"/pair {await host.new_pair_code()}")
        saved = await owner_says(api, "/remember fact The printer is on floor 3")
        assert saved[0].startswith("Saved #1"), saved  # control: before the swap
        before = desktop.memory.engine

        # The same weights from an explicit path: another model id, a real re-embedding.
        await edit_settings(desktop, lambda d: d.model_path.setText(str(embedder.model_path)))
        engine = desktop.memory.engine
        assert engine is not before
        await wait_until(lambda: "connected as" in status.text(), desktop.tray.changed)
        host = desktop.agent.host
        assert host is not None and host.runtime is not None and host.gateway is not None
        assert host.engine is engine and host.runtime.engine is engine
        saved = await owner_says(api, "/remember fact The kettle is in the kitchen")
        assert saved[0].startswith("Saved #2"), saved

    try:
        code, _ = run_desktop(loop, desktop, scenario)
    finally:
        loop.run_until_complete(api.stop())
    assert code == 0


def test_when_the_other_process_stops_the_tray_takes_the_agent_over(
    paths: Paths,
    existing_store: None,
    keyed: None,
    loop: asyncio.AbstractEventLoop,
) -> None:
    """The status line follows the runtime lock: "run by another MAMA process" while
    the daemon holds it, then the agent runs here once the daemon lets go."""
    desktop = Desktop(paths)
    tray = desktop.tray
    status = tray.agent_status_action
    notes: list[str] = []
    desktop.notified.connect(lambda title, _text: notes.append(title))
    paths.home.mkdir(parents=True, exist_ok=True)
    daemon = FileLock(paths.home / LOCK_FILE_NAME, thread_local=False)
    daemon.acquire()

    async def scenario() -> None:
        try:
            await wait_until(lambda: "The agent runs elsewhere" in notes, desktop.notified)
            assert status.text() == "Agent: run by another MAMA process"
            assert desktop.agent.host is None
        finally:
            daemon.release()  # "the daemon" stops
        await wait_until(lambda: desktop.agent.host is not None, desktop.agent.changed, 30)
        await wait_until(lambda: status.text().startswith("Agent: command mode ·"), tray.changed)
        assert tray.pause_action.isEnabled()
        assert "The agent runs here now" in notes

    try:
        code, _ = run_desktop(loop, desktop, scenario)
    finally:
        if daemon.is_locked:
            daemon.release()
    assert code == 0
    assert not daemon.is_locked
    with FileLock(paths.home / LOCK_FILE_NAME, thread_local=False, blocking=False):
        pass  # Quit released the lock the tray took over
