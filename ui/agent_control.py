"""The agent as the tray shows and steers it: the owner runtime (``app.serve.host``)
started over the open memory, its status line, working icon and trouble state,
Pause/Resume and Telegram pairing.

``AgentControl`` owns the one ``RuntimeHost`` of the desktop app. It learns
what changed from the runtime's listeners and the gateway, never by polling,
and refreshes the status line when the menu opens, after each turn and when a
source's health changes (new items, a failure, a recovery). While
another process (``mama daemon``, another tray) runs the agent, it follows that
process's runtime lock — a file lock has no change signal, so it asks every
few seconds — and starts the agent here once the lock is released.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from app.telegram.pairing import CODE_TTL
from mama_core.errors import MamaError
from ui.icons import app_icon
from ui.os_keyring import keyring_available
from ui.qt import QtCore, QtGui, QtWidgets, Signal
from ui.settings.telegram_help import missing_token_note
from ui.tasks import TaskGroup
from ui.tray import Tray

if TYPE_CHECKING:
    from app.local.paths import Paths
    from app.serve.host import HostStatus, RuntimeHost
    from app.telegram.pairing import PairedOwner
    from ui.memory_session import OpenMemory

log = logging.getLogger(__name__)

Notify = Callable[[str, str], None]
ShowDialog = Callable[[QtWidgets.QDialog], Awaitable[int]]

LOCK_POLL_S = 2.0
"""How often the tray asks whether the other process still holds the runtime lock."""

BACKEND_NAMES = {
    "command-mode": "command mode",
    "claude-code": "Claude Code",
    "codex": "Codex",
    "local-gguf": "local model",
}


CODE_MARGIN = timedelta(minutes=2)
"""A code with less time left than this is not shown again: a new one is made."""


class AgentControl(QtCore.QObject):
    """Starts, stops, pauses and shows the owner runtime for the tray."""

    changed = Signal()
    """The runtime started, stopped, paused or resumed, or its status line changed."""
    pair_code_shown = Signal(str)
    """A Telegram pairing code is on screen (for tests)."""
    paired = Signal(str)
    """A chat paired while the code was on screen: the owner's ``@name``."""
    unpaired = Signal(str)
    """The owner unpaired the Telegram chat from the pairing window: its ``@name``."""

    def __init__(
        self,
        paths: Paths,
        tray: Tray,
        tasks: TaskGroup,
        *,
        notify: Notify,
        notify_error: Notify,
        show_dialog: ShowDialog,
        parent: QtCore.QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.paths = paths
        self.tray = tray
        self.host: RuntimeHost | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._shown_code: tuple[str, datetime] | None = None
        """The pairing code this app showed last, and when it expires."""
        self._tasks = tasks
        self._notify = notify
        self._notify_error = notify_error
        self._show_dialog = show_dialog
        tray.pair_requested.connect(self.pair_telegram)
        tray.menu_opening.connect(self._status_soon)

    # --- life cycle -----------------------------------------------------

    async def start(self, memory: OpenMemory) -> None:
        """Start the runtime (and Telegram) over ``memory``; a failure is shown, not raised."""
        # Imported here: the runtime pulls in the backends and Telegram, which the
        # tray icon should not wait for.
        from app.serve.host import RuntimeBusyError, RuntimeHost

        host = RuntimeHost(self.paths, memory.settings, memory.engine, memory.store)
        host.working_listeners.append(self.tray.set_working)
        host.working_listeners.append(self._turn_ended)
        host.pause_listeners.append(lambda _paused: self._status_soon())
        host.connector_listeners.append(lambda _name: self._status_soon())
        self.tray.set_trouble(None)
        try:
            await host.start()
        except RuntimeBusyError as exc:
            log.warning("agent not started here: %s", exc.message)
            self.tray.set_agent_status("Agent: run by another MAMA process", available=False)
            self._notify("The agent runs elsewhere", exc.message)
            self.changed.emit()
            self._watcher = self._tasks.spawn(self._take_over_when_free(memory))
            return
        except MamaError as exc:
            log.warning("agent not started: %s: %s", exc.code, exc.message)
            self.tray.set_agent_status("Agent: not running", available=False)
            self.tray.set_trouble(exc.message)
            self.changed.emit()
            return
        self.host = host
        log.info("agent started here (%s)", memory.settings.agent_backend)
        await self.refresh_status()
        if host.gateway is not None:
            self._tasks.spawn(self._when_connected(host))

    async def _take_over_when_free(self, memory: OpenMemory) -> None:
        """Follow the other process's runtime lock; once it lets go, run the agent here."""
        from app.serve.host import runtime_running

        while await asyncio.to_thread(runtime_running, self.paths):
            await asyncio.sleep(LOCK_POLL_S)
        self._watcher = None
        log.info("the other MAMA process released the agent: starting it here")
        self.tray.set_agent_status("Agent: starting…", available=False)
        self.changed.emit()
        await self.start(memory)
        if self.host is not None:
            self._notify("The agent runs here now", "The other MAMA process stopped.")

    async def stop(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.cancel()
        host, self.host = self.host, None
        if host is not None:
            await host.stop()
            self.tray.set_working(False)

    async def restart(self, memory: OpenMemory) -> None:
        """Settings changed what the runtime is built from (backend, model, bot token)."""
        await self.stop()
        await self.start(memory)

    async def _when_connected(self, host: RuntimeHost) -> None:
        """Show "connected as @bot" once Telegram answers (it may take a while offline),
        or show as trouble that Telegram refused the token, until it is fixed."""
        gateway = host.gateway
        assert gateway is not None
        connected = await gateway.wait_connected()
        if host is not self.host:
            return
        await self.refresh_status()  # shows a refused token as trouble
        if not connected and gateway.fatal:
            self._notify_error("Telegram is not connected", gateway.fatal)

    # --- the status line ------------------------------------------------

    def _turn_ended(self, working: bool) -> None:
        if not working:  # a turn may have found the backend missing, or working again
            self._status_soon()

    def _status_soon(self) -> None:
        if self.host is not None:
            self._tasks.spawn(self.refresh_status())

    async def refresh_status(self) -> None:
        """Show the agent's and Telegram's state in the tray menu's first line."""
        host = self.host
        if host is None or not host.running:
            return
        try:
            status = await host.status()
        except RuntimeError:
            # Stopped while it answered (Settings restarting the agent, Quit): its
            # database thread is gone, and the next host shows its own state.
            if host is self.host and host.running:
                raise
            return
        self.tray.set_agent_status(status_line(status))
        self.tray.set_trouble(status.problem)
        self.tray.set_paused(status.paused)
        self.changed.emit()

    # --- what the owner asks for ----------------------------------------

    def set_paused(self, paused: bool) -> None:
        """Pause or resume the agent, here and for later starts (kept in the store)."""
        self.tray.set_paused(paused)
        host = self.host
        if host is not None and host.running:
            self._tasks.spawn(self._pause(host, paused))

    async def _pause(self, host: RuntimeHost, paused: bool) -> None:
        await host.set_paused(paused)
        await self.refresh_status()

    def pair_telegram(self) -> None:
        self._tasks.spawn(self.show_pair_code())

    async def show_pair_code(self) -> None:
        """Show a one-time code the owner sends to the bot as ``/pair CODE``."""
        host = self.host
        if host is None or not host.running:
            self._notify("Pairing unavailable", "The agent does not run in this app.")
            return
        box = QtWidgets.QMessageBox()
        box.setObjectName("pair_dialog")
        box.setWindowTitle("Pair Telegram")
        box.setWindowIcon(app_icon())
        box.setIcon(QtWidgets.QMessageBox.Icon.Information)
        box.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        gateway = host.gateway
        if gateway is None:
            box.setText(missing_token_note(await asyncio.to_thread(keyring_available)))
            await self._show_dialog(box)
            box.deleteLater()
            return

        owner = await host.paired_owner()
        if owner is not None:
            self._shown_code = None  # paired (here or elsewhere): that code is spent
            await self._offer_unpair(host, box, owner)
            return

        def on_paired(owner: PairedOwner) -> None:
            self._shown_code = None  # used: the next pairing needs a new one
            box.setText(f"Paired with {_who(owner)}. That chat is now your line to MAMA.")
            self.paired.emit(_who(owner))

        try:
            code, until = await self._pair_code(host)
        except MamaError as exc:  # paired meanwhile (from another process)
            box.deleteLater()
            self._notify("Pairing unavailable", exc.message)
            return
        to = _bot_name(gateway.app.bot)
        box.setText(
            f"Send this message to {to} in Telegram by {until:%H:%M}:\n\n"
            f"/pair {code}\n\nThat chat becomes the only one the agent listens to."
        )
        copy = box.addButton("&Copy message", QtWidgets.QMessageBox.ButtonRole.ActionRole)
        copy.setObjectName("pair_copy")
        # An ActionRole button closes the box too; this one only copies.
        copy.clicked.disconnect()
        copy.clicked.connect(lambda: QtGui.QGuiApplication.clipboard().setText(f"/pair {code}"))
        box.addButton(QtWidgets.QMessageBox.StandardButton.Close)
        gateway.paired_listeners.append(on_paired)
        self.pair_code_shown.emit(code)
        try:
            await self._show_dialog(box)
        finally:
            gateway.paired_listeners.remove(on_paired)
            box.deleteLater()
        await self.refresh_status()

    async def _pair_code(self, host: RuntimeHost) -> tuple[str, datetime]:
        """The code this app showed last, while it has time left, else a new one, with
        the local time it expires: opening the window again never outdates a code the
        owner may already have typed."""
        now = datetime.now().astimezone()
        if self._shown_code is not None and now < self._shown_code[1] - CODE_MARGIN:
            return self._shown_code
        code = await host.new_pair_code()
        self._shown_code = (code, now + CODE_TTL)
        return self._shown_code

    async def _offer_unpair(
        self, host: RuntimeHost, box: QtWidgets.QMessageBox, owner: PairedOwner
    ) -> None:
        """While a chat is paired no other can pair: the owner may unpair it here."""
        name = _who(owner)
        box.setText(
            f"Telegram is paired with {name}; only that chat reaches the agent.\n\n"
            "To pair another chat, unpair this one first: it is told so, and then "
            "Pair Telegram… gives a new code."
        )
        unpair = box.addButton("Unpair", QtWidgets.QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QtWidgets.QMessageBox.StandardButton.Close)
        try:
            await self._show_dialog(box)
            chosen = box.clickedButton() is unpair
        finally:
            box.deleteLater()
        if not chosen:
            return
        await host.unpair_telegram()
        self._notify("Telegram unpaired", f"{name} no longer reaches MAMA and was told so.")
        self.unpaired.emit(name)
        await self.refresh_status()


def _bot_name(bot: Any) -> str:
    """``@mama_bot``: the bot the code is for, once Telegram has said its name."""
    try:
        return f"@{bot.username}"
    except RuntimeError:  # not connected yet: python-telegram-bot knows no name
        return "your MAMA bot"


def _who(owner: PairedOwner) -> str:
    return f"@{owner.username}" if owner.username else "your chat"


def status_line(status: HostStatus) -> str:
    """The tray menu's first line, e.g. "Agent: Codex · Telegram: connected as @bot"."""
    agent = BACKEND_NAMES.get(status.backend, status.backend)
    if status.backend_problem:
        agent += " (cannot run; commands still work)"
    elif status.tools_problem:
        agent += " (waiting for its tools; the turn will be tried again)"
    if status.paused:
        held = status.waiting
        agent += (
            f" (paused, {held} message{'' if held == 1 else 's'} waiting)" if held else " (paused)"
        )
    telegram = status.telegram
    if status.owner:
        telegram += f", paired with {status.owner}"
    elif status.telegram.startswith("connected"):
        telegram += ", not paired"
    return f"Agent: {agent} · Telegram: {telegram}" + _sources(status)


def _sources(status: HostStatus) -> str:
    """Each connector in a few words, a problem first: " · Sources: work needs you (…)"."""
    if not status.connectors:
        return ""
    words = {"blocked": "needs you", "failing": "retrying"}
    parts: list[str] = []
    for health in sorted(status.connectors, key=lambda h: h.state not in words and not h.parts):
        if health.state in words:
            parts.append(f"{health.name} {words[health.state]} ({health.last_error_code})")
        elif health.state == "paused":
            parts.append(f"{health.name} paused")
        elif health.parts:
            broken = ", ".join(p.part for p in health.parts)
            parts.append(f"{health.name} cannot read {broken} (needs you)")
        else:
            parts.append(f"{health.name} {health.items_stored} items")
    return " · Sources: " + ", ".join(parts)
