"""The running desktop app: the tray, the memory behind it, and what its menu opens.

``ui.application.run()`` (``mama`` with no arguments) runs one ``Desktop`` on
a qasync loop. ``Desktop.run()`` shows the tray at once, then opens the memory
(first-run wizard, or key + store + model on a worker thread), starts the
owner runtime (the agent and Telegram, ``ui.agent_control``) over it, and lives
until Quit. A start failure shows its one-line reason and becomes the exit
code; later errors become tray notifications and log lines. If a ``mama
daemon`` already serves this memory, the tray still reviews and searches it
but leaves the agent to the daemon.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.local.logs import setup_file_logging
from app.local.paths import Paths
from app.local.settings import Settings
from mama_core.errors import KeyUnavailableError, MamaError, WrongKeyError
from ui.agent_control import AgentControl
from ui.catch_up_status import CatchUpStatus
from ui.error_reporting import RuntimeErrors, exit_code_of, fatal_dialog, one_line
from ui.icons import app_icon
from ui.memory_session import OpenMemory, find_key, is_first_run, open_memory, warm_up
from ui.qt import Qt, QtCore, QtGui, QtWidgets, Signal
from ui.startup_probe import StartupProbe
from ui.tasks import TaskGroup, await_dialog
from ui.tray import APP_TITLE, Tray

if TYPE_CHECKING:
    from collections.abc import Callable

    from app.runtime.owner_runtime import OwnerRuntime
    from mama_core.model import ChangeSet
    from ui.bridge import EngineBridge
    from ui.chat_window import ChatWindow
    from ui.review.window import ReviewWindow
    from ui.single_instance import SingleInstance

log = logging.getLogger(__name__)

PASSPHRASE_ATTEMPTS = 3
"""Passphrases the owner may try before the app gives up (wrong key, exit 11)."""
NOTIFY_COALESCE_MS = 50
NO_TRAY_HINT = "This desktop shows no tray icons, so MAMA lives in this window: closing it quits."


class WrongPassphrase(WrongKeyError):
    """Every passphrase the owner typed was wrong (the same exit code as a wrong key,
    but the message speaks of passphrases only, and the owner may try again)."""


class Desktop(QtCore.QObject):
    """The running desktop app: tray, review window, settings, and the open memory."""

    ready = Signal()
    """The memory is open and the tray's menu works."""
    review_loaded = Signal()
    """The review window is shown and its lists are filled."""
    notified = Signal(str, str)
    """(title, message) of each tray notification (for tests and the log)."""
    agent_pause_changed = Signal(bool)
    """The owner paused (True) or resumed (False) the agent from the tray."""
    dialog_opened = Signal(object)
    """A dialog of the app is open: first run, passphrase, settings, a fatal error."""
    settings_applied = Signal(object)
    """The owner saved Settings; the new ``Settings`` value."""

    def __init__(
        self,
        paths: Paths,
        *,
        instance: SingleInstance | None = None,
        probe: StartupProbe | None = None,
    ) -> None:
        super().__init__()
        self.paths = paths
        self.probe = probe or StartupProbe(None)
        self.instance = instance
        self.memory: OpenMemory | None = None
        self.bridge: EngineBridge | None = None
        self.window: ReviewWindow | None = None
        self.chat: ChatWindow | None = None
        self.first_run: QtWidgets.QWizard | None = None
        self.settings_dialog: QtWidgets.QDialog | None = None
        self.log_path: Path | None = None
        self.open_url: Callable[[QtCore.QUrl], Any] = QtGui.QDesktopServices.openUrl
        self._quit = asyncio.Event()
        self._dialogs: list[QtWidgets.QDialog] = []
        self._show_when_ready = False
        self._chat_when_ready = False
        self._welcome_pending = False
        self.welcome: QtWidgets.QWidget | None = None
        """The first run's "what now" note in the review window, once shown."""
        self._tasks = TaskGroup(self._task_failed)
        self._pending_added: set[int] = set()
        self._notify_timer = QtCore.QTimer(self, singleShot=True, interval=NOTIFY_COALESCE_MS)
        self._notify_timer.timeout.connect(self._changes_settled)
        self.errors = RuntimeErrors(self.notify_error, None)

        self.tray = Tray(self)
        self.catch_up_status = CatchUpStatus(self.tray, self)
        self.tray.review_requested.connect(self.show_review)
        self.tray.search_requested.connect(self.show_search)
        self.tray.chat_requested.connect(self.show_chat)
        self.tray.pause_requested.connect(self.set_agent_paused)
        self.tray.settings_requested.connect(self.open_settings)
        self.tray.open_folder_requested.connect(self.open_data_folder)
        self.tray.quit_requested.connect(self.quit)
        self.tray.availability_changed.connect(self._tray_availability)
        self.tray.message_clicked.connect(self.open_notified)
        self._notified_proposal: int | None = None
        """The proposal the last notification named (None: several, or none)."""
        self._unseen: list[int] = []
        """Proposals announced since the owner last opened the review window."""
        self._announcing = asyncio.Lock()
        if instance is not None:
            instance.show_requested.connect(self.show_review)
            instance.chat_requested.connect(self.show_chat)
        self.agent = AgentControl(
            paths,
            self.tray,
            self._tasks,
            notify=self.notify,
            notify_error=self.notify_error,
            show_dialog=self._show,
            parent=self,
        )

    # --- life cycle -----------------------------------------------------------------

    async def run(self) -> int:
        """Show the tray, open the memory, serve until Quit; returns the exit code."""
        self.tray.show()
        self.probe.mark("tray_shown")
        self.log_path = setup_file_logging(self.paths.log)
        self.errors = RuntimeErrors(self.notify_error, self.log_path)
        loop = asyncio.get_running_loop()
        self.errors.install(loop)
        try:
            while True:
                try:
                    settings = Settings.load(self.paths.settings)
                    memory = await self._open(settings)
                    break
                except MamaError as exc:
                    log.warning("cannot start: %s: %s", exc.code, exc.message)
                    if self._quit.is_set():  # asked to quit while a dialog was open
                        return 0
                    if await self._fatal(exc.message, retry=isinstance(exc, WrongPassphrase)):
                        continue
                    return exc.exit_code
                except Exception as exc:
                    log.error("cannot start", exc_info=exc)
                    await self._fatal(one_line(exc, self.log_path))
                    return exit_code_of(exc)
            if memory is None:  # the owner closed the first-run wizard, or quit meanwhile
                return 0
            if self._quit.is_set():
                self.memory = memory  # closed below like any other
                return 0
            self._attach(memory)
            self.probe.mark("memory_open")
            self.ready.emit()
            if not self.tray.available:
                self._live_in_window()
            elif self._show_when_ready:
                self.show_review()
            if self._chat_when_ready:
                self.show_chat()
            # No warm-up here: an idle tray holds no model (e5's vocabulary alone costs
            # llama.cpp ~135 MB). It loads when a window that searches opens, or at the
            # first search or save, and is freed again after MODEL_IDLE_RELEASE_S.
            await self._quit.wait()
            return 0
        finally:
            await self._shutdown()
            self.errors.uninstall(loop)

    def _warm_up(self) -> None:
        """Load the embedding model on a worker thread now that the owner opened a window
        that searches, so the model is ready by the time a query is typed."""
        memory = self.memory
        if memory is not None and not memory.embedder.is_loaded:
            self._tasks.spawn(self._warm_up_in_background(memory))

    async def _warm_up_in_background(self, memory: OpenMemory) -> None:
        await asyncio.to_thread(warm_up, memory)
        self.probe.mark("model_loaded")
        self.probe.mark_modules()

    async def _fatal(self, message: str, *, retry: bool = False) -> bool:
        """Show why MAMA cannot start; True if the owner chose Try again (offered
        with ``retry``: the passphrase may have been mistyped)."""
        self.tray.hide()
        box = fatal_dialog(message)
        box.setWindowIcon(app_icon())
        again = None
        if retry:
            again = box.addButton("Try again", QtWidgets.QMessageBox.ButtonRole.AcceptRole)
            box.setDefaultButton(again)
        await self._show(box)
        chosen = again is not None and box.clickedButton() is again and not self._quit.is_set()
        box.deleteLater()
        if chosen:
            self.tray.show()
        return chosen

    async def _show(self, dialog: QtWidgets.QDialog) -> int:
        """Show one of the app's dialogs and wait for the owner's answer (Quit closes it)."""
        if self._quit.is_set():
            return QtWidgets.QDialog.DialogCode.Rejected
        self._dialogs.append(dialog)
        self.dialog_opened.emit(dialog)
        log.info("waiting for the owner: %s", dialog.objectName() or type(dialog).__name__)
        try:
            return await await_dialog(dialog)
        finally:
            self._dialogs.remove(dialog)

    def quit(self) -> None:
        """Leave at the next turn of the loop (the memory is closed cleanly); a dialog
        the app is waiting on (first run, passphrase, settings) is cancelled."""
        self._quit.set()
        for dialog in list(self._dialogs):
            dialog.reject()

    async def _shutdown(self) -> None:
        self._notify_timer.stop()
        if self.chat is not None:
            chat, self.chat = self.chat, None
            chat.close()
            await chat.aclose()
            chat.deleteLater()
        if self.window is not None:
            window, self.window = self.window, None
            await window.aclose()
            window.close()
            window.deleteLater()
        await self._tasks.aclose()
        self.catch_up_status.stop()
        await self.agent.stop()
        if self.bridge is not None:
            self.bridge.close()
        if self.memory is not None:
            memory, self.memory = self.memory, None
            await asyncio.to_thread(memory.close)
        if self.instance is not None:
            self.instance.close()
        self.tray.hide()

    # --- opening the memory -----------------------------------------------------------

    async def _open(self, settings: Settings) -> OpenMemory | None:
        if is_first_run(self.paths):
            return await self._first_run(settings)
        return await self._open_existing(settings)

    async def _first_run(self, settings: Settings) -> OpenMemory | None:
        from ui.first_run import FirstRunWizard

        wizard = FirstRunWizard(self.paths, settings)
        wizard.setWindowIcon(app_icon())
        self.first_run = wizard
        try:
            accepted = await self._show(wizard) == QtWidgets.QDialog.DialogCode.Accepted
            await wizard.aclose()
            if not accepted or wizard.memory is None:
                return None
            # The review window opens once, with a short "what now" on top.
            self._show_when_ready = self._welcome_pending = True
            token = wizard.telegram_token()
            if token:
                self._tasks.spawn(self._store_token(token))
            return wizard.memory
        finally:
            wizard.deleteLater()
            self.first_run = None

    async def _open_existing(self, settings: Settings) -> OpenMemory | None:
        relay = _Progress(self)
        relay.advanced.connect(self._model_progress)
        passphrase: str | None = None
        for attempt in range(PASSPHRASE_ATTEMPTS + 1):  # the first try asks nobody
            ask = None if passphrase is None else (lambda _p, _c, pw=passphrase: pw)
            try:
                key = await asyncio.to_thread(find_key, self.paths, ask)
                return await asyncio.to_thread(
                    open_memory, self.paths, settings, key, relay.advanced.emit
                )
            except KeyUnavailableError:
                if passphrase is not None:
                    raise
                wrong = False
            except WrongKeyError as exc:
                if passphrase is None:
                    raise  # the key from MAMA_DB_KEY or the keyring: its message names them
                if attempt == PASSPHRASE_ATTEMPTS:
                    raise WrongPassphrase(
                        f"None of the {PASSPHRASE_ATTEMPTS} passphrases you typed opens the "
                        f"memory in {self.paths.home}. Check Caps Lock and the keyboard "
                        "layout, then try again."
                    ) from exc
                wrong = True
            tries_left = PASSPHRASE_ATTEMPTS - attempt
            passphrase = await self._ask_passphrase(wrong, tries_left)
            if self._quit.is_set():
                return None
            if not passphrase:
                raise KeyUnavailableError("No passphrase was given; the memory store stays closed.")
        raise AssertionError("unreachable")

    async def _ask_passphrase(self, wrong: bool, tries_left: int) -> str | None:
        dialog = QtWidgets.QInputDialog()
        dialog.setObjectName("passphrase_dialog")
        dialog.setWindowTitle("Passphrase")
        tries = f"{tries_left} {'try' if tries_left == 1 else 'tries'} left"
        dialog.setLabelText(
            (
                f"That passphrase does not open the memory ({tries}).\n"
                "Check Caps Lock and the keyboard layout.\n\n"
                if wrong
                else ""
            )
            + f"Passphrase for the memory in {self.paths.home}:"
        )
        dialog.setTextEchoMode(QtWidgets.QLineEdit.EchoMode.Password)
        accepted = await self._show(dialog) == QtWidgets.QDialog.DialogCode.Accepted
        text = dialog.textValue() if accepted else None
        dialog.deleteLater()
        return text

    def _model_progress(self, done: int, total: int, what: str) -> None:
        self.tray.icon.setToolTip(f"{APP_TITLE} — {what} ({done}/{total})")

    def _attach(self, memory: OpenMemory) -> None:
        from ui.bridge import EngineBridge

        self.memory = memory
        self.bridge = EngineBridge(memory.engine, self)
        self.bridge.changed.connect(self._on_changes)
        self.tray.set_ready()
        self._tasks.spawn(self._refresh_waiting())
        self._tasks.spawn(self._start_agent(memory))
        self._tasks.spawn(self._catch_up(memory))

    async def _start_agent(self, memory: OpenMemory) -> None:
        try:
            await self.agent.start(memory)
        finally:
            self.probe.mark_modules()  # what the idle tray holds, for bench.memory_use

    async def _catch_up(self, memory: OpenMemory) -> None:
        """Embed, in the background, the memories lacking a vector of this model (the
        default changed in an update); the tray says how far it got."""
        try:
            catch_up = await asyncio.to_thread(memory.engine.catch_up_vectors)
        except MamaError as exc:  # closed meanwhile (Quit, a model change): nothing to show
            log.info("no vector catch-up: %s", exc.message)
            return
        self.catch_up_status.follow(catch_up)

    # --- change-sets: the tray's count and notifications ----------------------------------

    def _on_changes(self, changes: ChangeSet) -> None:
        self._pending_added.update(changes.added)
        if not self._notify_timer.isActive():
            self._notify_timer.start()

    def _changes_settled(self) -> None:
        added, self._pending_added = self._pending_added, set()
        self._tasks.spawn(self._announce(sorted(added)))

    async def _announce(self, added: list[int]) -> None:
        async with self._announcing:  # one after the other: the count adds up in order
            await self._refresh_waiting()
            if added and self.bridge is not None:
                await self._announce_proposals(self.bridge, added)

    async def _announce_proposals(self, bridge: EngineBridge, added: list[int]) -> None:
        """One balloon for every proposal that arrived since the owner last looked: a
        newer balloon replaces the one before, so it counts them all ("5 new"), not
        only the last batch ("2 new")."""
        from mama_core.memory import NotFoundError
        from mama_core.memory.owner_reads import proposed_among

        fresh = await bridge.read(lambda conn: proposed_among(conn, added))
        self._unseen.extend(i for i in fresh if i not in self._unseen)
        if not fresh:
            return
        self._notified_proposal = self._unseen[0] if len(self._unseen) == 1 else None
        if len(self._unseen) > 1:
            self.notify(
                "New proposals to review", f"{len(self._unseen)} new proposals are waiting."
            )
            return
        try:
            record = (await bridge.dispatch("memory.read", {"id": self._unseen[0]}))["record"]
        except NotFoundError:
            return
        self.notify(
            "New proposal to review",
            f"#{record['id']} [{record.get('kind')}] {record.get('summary', '')}",
        )

    async def _refresh_waiting(self) -> None:
        if self.bridge is None:
            return
        from mama_core.memory.owner_reads import count_by_status

        counts = await self.bridge.read(count_by_status)
        self.tray.set_waiting(counts.get("proposed", 0))

    # --- what the tray opens --------------------------------------------------------------

    def show_review(self) -> None:
        """Show (creating on first use) the review window, in front."""
        if self.bridge is None:
            self._show_when_ready = True
            return
        self._warm_up()
        first = self.window is None
        self._unseen.clear()  # the owner looks: the next balloon counts afresh
        if first:
            self.probe.mark("review_requested")
        if self.window is None:
            from ui.review.table_state import STATE_FILE
            from ui.review.window import ReviewWindow

            self.window = ReviewWindow(self.bridge, state_file=self.paths.home / STATE_FILE)
            self.window.setWindowIcon(app_icon())
            self.window.quit_requested.connect(self.quit)
            if self._welcome_pending:
                from ui.welcome import show_welcome

                self._welcome_pending = False
                self.welcome = show_welcome(self.window)
        window = self.window
        window.show()
        window.raise_()
        window.activateWindow()
        if first:
            self.probe.mark("review_shown")
            self._tasks.spawn(self._load_window(window))

    def open_notified(self) -> None:
        """The owner clicked a notification: show the proposal it named (or, for
        several, the Proposed tab) in the review window."""
        if self.bridge is None:
            return
        judgment_id = self._notified_proposal
        loading = self.window is None
        self.show_review()
        window = self.window
        if window is None:
            return
        from ui.review.window import TAB_PROPOSED

        window.show_tab(TAB_PROPOSED)
        if judgment_id is not None:
            if loading:
                window.first_tab_loaded.connect(
                    lambda: window.select_id(judgment_id), Qt.ConnectionType.SingleShotConnection
                )
            window.select_id(judgment_id)

    async def _load_window(self, window: ReviewWindow) -> None:
        window.first_tab_loaded.connect(lambda: self.probe.mark("review_first_tab"))
        await window.load()
        self.probe.mark("review_loaded")
        self.review_loaded.emit()

    # --- without a system tray ------------------------------------------------------------

    def _tray_availability(self, available: bool) -> None:
        log.info("system tray %s", "available" if available else "gone")
        if not available and self.bridge is not None:
            self._live_in_window()

    def _live_in_window(self) -> None:
        """No tray to live in: the review window opens, carries the tray's menu, says
        why in one line, and closing it quits (as apps without a tray icon do)."""
        self.show_review()
        window = self.window
        if window is None:
            return
        window.show_message(NO_TRAY_HINT)
        bar = window.menuBar()
        if not bar.actions():
            # The window's own menu over the tray's actions: the tray keeps its menu
            # (a menu given to the bar would be deleted with the window).
            menu = bar.addMenu(f"&{APP_TITLE}")
            menu.setObjectName("app_menu")
            menu.aboutToShow.connect(self.tray.menu_opening)
            menu.addActions(self.tray.menu.actions())
            window.installEventFilter(self)

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:
        if (
            watched is self.window
            and event.type() == QtCore.QEvent.Type.Close
            and not self.tray.available
        ):
            self.quit()
        return False

    def show_chat(self) -> None:
        """The chat window (made on first use), in front, the box focused."""
        memory, bridge = self.memory, self.bridge
        if memory is None or bridge is None:
            self._chat_when_ready = True
            return
        self._warm_up()
        if self.chat is None:
            from ui.chat_window import ChatWindow

            def runtime() -> OwnerRuntime | None:
                host = self.agent.host
                return host.runtime if host is not None else None

            self.chat = ChatWindow(bridge, memory.store, runtime)
            self.chat.setWindowIcon(app_icon())
        self.chat.show()
        self.chat.raise_()
        self.chat.activateWindow()

    def show_search(self) -> None:
        self.show_review()
        if self.window is not None:
            self.window.focus_search()

    def set_agent_paused(self, paused: bool) -> None:
        """Pause or resume the agent, here and for later starts (kept in the store)."""
        self.agent_pause_changed.emit(paused)
        self.agent.set_paused(paused)

    def open_data_folder(self) -> None:
        """Open the data folder in the file manager; where no program opens folders
        (a bare window manager), say so and offer to copy its path."""
        self.paths.home.mkdir(parents=True, exist_ok=True)
        if self.open_url(QtCore.QUrl.fromLocalFile(str(self.paths.home))):
            return
        self._tasks.spawn(self._offer_folder_path())

    async def _offer_folder_path(self) -> None:
        folder = str(self.paths.home)
        box = QtWidgets.QMessageBox(
            QtWidgets.QMessageBox.Icon.Information,
            "Data folder",
            f"No program on this desktop opens folders. MAMA's data folder is {folder}",
            QtWidgets.QMessageBox.StandardButton.Close,
        )
        box.setObjectName("data_folder_dialog")
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        copy = box.addButton("&Copy path", QtWidgets.QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(copy)
        await self._show(box)
        if box.clickedButton() is copy:
            QtGui.QGuiApplication.clipboard().setText(folder)
        box.deleteLater()

    def open_settings(self) -> None:
        self._tasks.spawn(self.edit_settings())

    async def edit_settings(self) -> None:
        """Show Settings and apply what the owner chose."""
        from ui.settings.flow import apply_choice, settings_dialog

        before = self.memory.settings if self.memory else Settings.load(self.paths.settings)
        dialog = await settings_dialog(
            self.window,
            before,
            self.paths.home,
            settings_path=self.paths.settings,
            store=self.memory.store if self.memory else None,
        )
        self.settings_dialog = dialog
        try:
            if await self._show(dialog) != QtWidgets.QDialog.DialogCode.Accepted:
                return
            choice = dialog.choice()
            # A new model means a new engine: the runtime and the bot hold the engine,
            # so they stop before the old one closes and start again over the new one.
            swap = self.memory is not None and choice.model_changed(before)
            if swap:
                await self.agent.stop()
            try:
                new = await apply_choice(
                    choice,
                    before,
                    settings_path=self.paths.settings,
                    memory=self.memory,
                    bridge=self.bridge,
                    parent=self.window,
                    notify=self.notify,
                )
            finally:
                if swap and self.memory is not None:
                    await self.agent.start(self.memory)
                    # The new engine catches up on what the dialog could not see
                    # (memories another process saved meanwhile with the old model).
                    self._tasks.spawn(self._catch_up(self.memory))
            runtime_inputs = ("agent_backend", "local_model_path", "agent_scopes")
            if (
                not swap
                and self.memory is not None
                and (
                    choice.telegram_token is not None
                    or any(getattr(new, f) != getattr(before, f) for f in runtime_inputs)
                )
            ):
                await self.agent.restart(self.memory)
            self.settings_applied.emit(new)
        finally:
            self.settings_dialog = None
            if dialog.connectors_page is not None:
                await dialog.connectors_page.aclose()
            dialog.deleteLater()

    async def _store_token(self, token: str) -> None:
        from ui.settings.flow import store_token

        await store_token(token, self.notify)

    # --- telling the owner -------------------------------------------------------------------

    def notify(self, title: str, message: str) -> None:
        self.tray.notify(title, message)
        self.notified.emit(title, message)

    def notify_error(self, title: str, message: str) -> None:
        self.tray.notify(title, message, critical=True)
        self.notified.emit(title, message)

    def _task_failed(self, exc: BaseException) -> None:
        self.errors.report(exc, "background task failed")


class _Progress(QtCore.QObject):
    """Carries the model's progress from the worker thread to the UI thread."""

    advanced = Signal(int, int, str)
