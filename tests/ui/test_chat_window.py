"""The chat window on a real store, engine and owner runtime (command mode): Enter
sends an owner turn and the reply appears, the keyboard does the rest, Telegram's
messages show, a purge removes a bubble at once, and a message sent while no agent
runs is answered once one starts (as after a crash and a restart)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from app.backends.base import TurnReply, TurnRequest
from app.backends.command_mode import CommandModeBackend
from app.backends.toolbox import ToolBox, ToolSpec
from app.durable.mailbox import InputKind, NewInput
from app.local.paths import Paths
from app.runtime.owner_runtime import OwnerRuntime, RuntimeSettings
from mama_core.embeddings import GgufEmbedder
from mama_core.memory import Engine, EngineConfig, Grant, SessionFacts
from mama_core.store import DbKey, Store
from tests.conftest import REPO_ROOT, TEST_KEY_HEX
from tests.ui.conftest import agent_propose, status_of, wait_signal, wait_until
from tests.ui.test_desktop import run_desktop
from ui.bridge import EngineBridge
from ui.chat_window import ChatWindow
from ui.desktop import Desktop
from ui.qt import Qt
from ui.single_instance import SingleInstance, server_name

SETTINGS = RuntimeSettings(poll_seconds=5.0)


def run_chat(
    loop: asyncio.AbstractEventLoop,
    engine: Engine,
    store: Store,
    scenario: Callable[[ChatWindow, dict[str, OwnerRuntime | None]], Awaitable[Any]],
    *,
    with_runtime: bool = True,
) -> None:
    held: dict[str, OwnerRuntime | None] = {"runtime": None}

    async def whole() -> None:
        if with_runtime:
            runtime = OwnerRuntime(engine, store, CommandModeBackend(), SETTINGS)
            await runtime.start()
            held["runtime"] = runtime
        bridge = EngineBridge(engine)
        window = ChatWindow(bridge, store, lambda: held["runtime"])
        try:
            window.show()
            await wait_until(lambda: window.history.count() >= 0, window.reloaded)
            await scenario(window, held)
        finally:
            window.close()
            await window.aclose()
            bridge.close()
            running = held["runtime"]
            if running is not None:
                await running.stop()

    loop.run_until_complete(whole())


def type_and_send(qtbot: QtBot, window: ChatWindow, text: str) -> None:
    qtbot.keyClicks(window.box, text)
    qtbot.keyClick(window.box, Qt.Key.Key_Return)


def test_enter_sends_a_turn_and_the_reply_appears(
    qtbot: QtBot, loop: asyncio.AbstractEventLoop, engine: Engine, store: Store
) -> None:
    async def scenario(window: ChatWindow, _held: dict[str, OwnerRuntime | None]) -> None:
        qtbot.addWidget(window)
        # Shift+Enter is a new line, not a send: nothing is posted yet.
        qtbot.keyClicks(window.box, "/remember fact The boiler")
        qtbot.keyClick(window.box, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
        assert window.box.toPlainText() == "/remember fact The boiler\n"
        assert window.bubbles() == []
        window.box.clear()

        type_and_send(qtbot, window, "/remember fact The boiler is serviced in May")
        assert window.box.toPlainText() == ""
        reply = (False, "Saved #1 (fact, active).")
        await wait_until(lambda: reply in window.bubbles(), window.reloaded, 30)
        assert window.bubbles() == [
            (True, "/remember fact The boiler is serviced in May"),
            reply,
        ]

        # Up in the empty box brings the last message back to edit; Esc closes.
        qtbot.keyClick(window.box, Qt.Key.Key_Up)
        assert window.box.toPlainText() == "/remember fact The boiler is serviced in May"
        qtbot.keyClick(window.box, Qt.Key.Key_Escape)
        assert not window.isVisible()

    run_chat(loop, engine, store, scenario)
    found = engine.dispatch("memory.read", {"id": 1}, SessionFacts.owner_cli(), Grant.owner())
    assert found["record"]["provenance"]["message_ref"].startswith("desk:")


def test_telegram_messages_show_and_a_purge_removes_the_bubble(
    qtbot: QtBot, loop: asyncio.AbstractEventLoop, engine: Engine, store: Store
) -> None:
    async def scenario(window: ChatWindow, held: dict[str, OwnerRuntime | None]) -> None:
        qtbot.addWidget(window)
        runtime = held["runtime"]
        assert runtime is not None
        posted = await runtime.post(
            NewInput(InputKind.OWNER_MESSAGE, "telegram", "42:1", "/search printer")
        )
        answered = (False, "Nothing found.")
        await wait_until(lambda: answered in window.bubbles(), window.reloaded, 30)
        assert window.history.item(0).text().startswith("You (in Telegram) · ")

        await asyncio.to_thread(
            engine.dispatch,
            "memory.purge",
            {"observation_ids": [posted.observation_id], "reason": "The owner forgets it."},
            SessionFacts.owner_cli(),
            Grant.owner(),
        )
        await wait_until(lambda: len(window.bubbles()) == 1, window.reloaded, 30)
        assert window.bubbles() == [answered]  # the reply stays: only the message was purged

    run_chat(loop, engine, store, scenario)


def test_a_message_sent_while_no_agent_runs_is_answered_when_one_starts(
    qtbot: QtBot, loop: asyncio.AbstractEventLoop, engine: Engine, store: Store
) -> None:
    async def scenario(window: ChatWindow, held: dict[str, OwnerRuntime | None]) -> None:
        qtbot.addWidget(window)
        type_and_send(qtbot, window, "/search anything")
        asked = (True, "/search anything")
        await wait_until(lambda: asked in window.bubbles(), window.reloaded, 30)
        assert window.bubbles() == [asked]  # kept, not answered: no agent runs
        assert window.status.text() == "MAMA is answering…"

        runtime = OwnerRuntime(engine, store, CommandModeBackend(), SETTINGS)
        await runtime.start()  # the app again, after a crash
        held["runtime"] = runtime
        reply = (False, "Nothing found.")
        await wait_until(lambda: reply in window.bubbles(), window.reloaded, 30)
        assert window.bubbles() == [asked, reply]
        assert window.status.text() == ""

    run_chat(loop, engine, store, scenario, with_runtime=False)


def test_a_waiting_proposal_shows_inline_and_approve_decides_it(
    qtbot: QtBot, loop: asyncio.AbstractEventLoop, engine: Engine, store: Store
) -> None:
    ids: dict[str, int] = {}

    async def scenario(window: ChatWindow, _held: dict[str, OwnerRuntime | None]) -> None:
        qtbot.addWidget(window)
        # The agent proposes twice (an MCP client, say); the runtime cards both.
        ids["kept"] = await asyncio.to_thread(agent_propose, engine, "Prefer tables")
        ids["other"] = await asyncio.to_thread(agent_propose, engine, "Write in short lines")
        both = {ids["kept"], ids["other"]}
        await wait_until(lambda: set(window.proposals) == both, window.reloaded, 30)
        card = window.proposals[ids["kept"]]
        assert "Prefer tables" in card.label.text() and card.label.text().startswith("New ")

        qtbot.mouseClick(card.approve, Qt.MouseButton.LeftButton)
        approved = f"Approved #{ids['kept']}."
        await wait_until(lambda: window.status.text() == approved, window.reloaded, 30)
        assert set(window.proposals) == {ids["other"]}

    run_chat(loop, engine, store, scenario)
    assert status_of(store, ids["kept"]) == "active"
    assert status_of(store, ids["other"]) == "proposed"  # only the clicked one was decided


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


def test_the_tray_and_mama_open_chat_show_the_window_of_the_running_app(
    qtbot: QtBot,
    paths: Paths,
    existing_store: None,
    keyed: None,
    loop: asyncio.AbstractEventLoop,
) -> None:
    instance = SingleInstance(server_name(paths.home))
    assert instance.listen()
    desktop = Desktop(paths, instance=instance)
    env = {**os.environ, "MAMA_HOME": str(paths.home), "MAMA_DB_KEY": TEST_KEY_HEX}

    async def scenario() -> subprocess.CompletedProcess[str]:
        assert desktop.tray.chat_action.text() == "&Chat…"
        assert desktop.tray.chat_action.isEnabled()
        desktop.tray.chat_action.trigger()
        window = desktop.chat
        assert window is not None and window.isVisible()
        await wait_until(lambda: desktop.agent.host is not None, desktop.tray.changed, 60)
        type_and_send(qtbot, window, "/remember fact The tray app answers here")
        reply = (False, "Saved #1 (fact, active).")
        await wait_until(lambda: reply in window.bubbles(), window.reloaded, 30)

        window.close()
        assert not window.isVisible()
        # ``mama open chat`` from a terminal: the running app shows its chat window again.
        opened = asyncio.ensure_future(wait_signal(instance.chat_requested, 60))
        second = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "ui.entry", "open", "chat"],
            env=env,
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        await opened
        assert window.isVisible()
        assert desktop.window is None  # the chat, not the review window
        return second

    code, second = run_desktop(loop, desktop, scenario)
    assert code == 0
    assert second.returncode == 0, second.stderr


def test_a_running_daemon_answers_the_window(
    qtbot: QtBot,
    paths: Paths,
    existing_store: None,
    loop: asyncio.AbstractEventLoop,
    engine: Engine,
    store: Store,
) -> None:
    """The agent runs in another process (``mama daemon``): the window's message goes
    through the store, and the daemon's reply comes back the same way."""
    env = {
        **os.environ,
        "MAMA_HOME": str(paths.home),
        "MAMA_DB_KEY": TEST_KEY_HEX,
        "MAMA_CACHE_DIR": str(paths.cache),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }
    with subprocess.Popen(
        [sys.executable, "-m", "ui.entry", "daemon"],
        env=env,
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as daemon:
        try:
            assert daemon.stdout is not None and "ready" in daemon.stdout.readline()

            async def scenario(window: ChatWindow, held: dict[str, OwnerRuntime | None]) -> None:
                qtbot.addWidget(window)
                assert held["runtime"] is None  # nothing runs the agent in this process
                type_and_send(qtbot, window, "/remember fact The daemon answered this")
                reply = (False, "Saved #1 (fact, active).")
                await wait_until(lambda: reply in window.bubbles(), window.reloaded, 60)

            run_chat(loop, engine, store, scenario, with_runtime=False)
        finally:
            daemon.send_signal(signal.SIGTERM)
            daemon.communicate(timeout=60)
    assert daemon.returncode == 0


class StreamingAgent:
    """A backend at the edge that writes its reply in two messages, the second only
    when the test says so (as a model streaming its answer)."""

    name = "streaming-agent"
    speaks_for_owner = False
    writes_briefs = True
    version = "1.0"
    wants_session_context = False

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def start(self, tools: list[ToolSpec]) -> None:
        return None

    async def close(self) -> None:
        return None

    async def forget_session(self) -> list[Path]:
        return []

    async def run_turn(self, request: TurnRequest, tools: ToolBox) -> TurnReply:
        assert request.on_text is not None
        request.on_text("The boiler")
        await self.release.wait()
        request.on_text("The boiler\nis serviced in May.")
        return TurnReply("The boiler\nis serviced in May.")


def test_a_streamed_reply_grows_in_the_window_until_it_is_stored(
    qtbot: QtBot, loop: asyncio.AbstractEventLoop, engine: Engine, store: Store
) -> None:
    agent = StreamingAgent()

    async def whole() -> None:
        runtime = OwnerRuntime(engine, store, agent, SETTINGS)
        await runtime.start()
        bridge = EngineBridge(engine)
        window = ChatWindow(bridge, store, lambda: runtime)
        qtbot.addWidget(window)
        try:
            window.show()
            type_and_send(qtbot, window, "When is the boiler serviced?")
            await wait_until(lambda: window.partial_text() == "The boiler", window.reloaded, 30)
            # Written so far, not stored yet: no reply bubble, the partial one shows.
            assert window.bubbles() == [(True, "When is the boiler serviced?")]
            assert window.history.item(window.history.count() - 1).text().endswith("The boiler")

            agent.release.set()
            stored = (False, "The boiler\nis serviced in May.")
            await wait_until(lambda: stored in window.bubbles(), window.reloaded, 30)
            assert window.partial_text() is None
            assert window.history.count() == 2  # the partial bubble gave way to the reply
        finally:
            window.close()
            await window.aclose()
            bridge.close()
            await runtime.stop()

    loop.run_until_complete(whole())
