"""The first-run wizard: the key, the store and the model, then (optionally) Telegram.

Three short pages. *Key*: a random key kept in the OS keyring, or, where no
keyring works, a passphrase the owner chooses (typed twice). *Memory*: the
encrypted store is created and the embedding model built on a worker thread,
with a progress bar fed by the model's progress callback. *Telegram*: a bot
token, kept in the keyring, or skipped. The wizard hands the open memory to
the desktop controller.

Going Back to the key page discards the store just made (and a keyring key made
for it), and cancelling leaves none: the store that stays is always the one made
with what the owner last chose, never an earlier passphrase.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Coroutine
from html import escape
from typing import TYPE_CHECKING, Any

from app.local.keys import ENV_KEY, KEYRING_SERVICE, keyring_account
from mama_core.errors import KeyUnavailableError, MamaError
from ui.memory_session import OpenMemory, discard_new_store, find_key, open_memory
from ui.os_keyring import backend_name, keyring_available
from ui.palette import note_style
from ui.qt import Qt, QtWidgets, Signal
from ui.settings.telegram_help import (
    environment_token_note,
    no_keyring_token_note,
    token_from_environment,
)
from ui.tasks import TaskGroup

if TYPE_CHECKING:
    from app.local.paths import Paths
    from app.local.settings import Settings

log = logging.getLogger(__name__)

MIN_PASSPHRASE = 8
ABOUT_MAMA = (
    "MAMA is your personal work agent with a memory you can trust. It lives in the "
    "system tray, talks with you, works through a coding agent, and remembers your "
    "decisions, preferences and rules in an encrypted file on this computer; you review "
    "what it learns."
)
TOKEN_PLACEHOLDER = "Bot token from @BotFather (leave empty to skip)"
PAGE_KEY, PAGE_MEMORY, PAGE_TELEGRAM = range(3)


class KeyPage(QtWidgets.QWizardPage):
    """Where the store's key comes from."""

    def __init__(self, paths: Paths, use_keyring: bool) -> None:
        super().__init__()
        self.setObjectName("key_page")
        self.setTitle("Welcome to MAMA")
        self.setSubTitle(f"Your memory will be kept encrypted in {paths.home}.")
        self._paths = paths
        layout = QtWidgets.QVBoxLayout(self)
        self.about = QtWidgets.QLabel(ABOUT_MAMA)
        self.about.setObjectName("about_mama")
        self.about.setWordWrap(True)
        layout.addWidget(self.about)
        self.explain = QtWidgets.QLabel()
        self.explain.setObjectName("key_explain")
        self.explain.setWordWrap(True)
        layout.addWidget(self.explain)
        self.backup = QtWidgets.QLabel()
        self.backup.setObjectName("key_backup")
        self.backup.setWordWrap(True)
        self.backup.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.backup)
        form = QtWidgets.QFormLayout()
        self.passphrase = QtWidgets.QLineEdit()
        self.passphrase.setObjectName("passphrase")
        self.passphrase.setEchoMode(QtWidgets.QLineEdit.EchoMode.Password)
        self.again = QtWidgets.QLineEdit()
        self.again.setObjectName("passphrase_again")
        self.again.setEchoMode(QtWidgets.QLineEdit.EchoMode.Password)
        self.show_text = QtWidgets.QCheckBox("Show passphrase")
        self.show_text.setObjectName("show_passphrase")
        self.show_text.toggled.connect(self._show_toggled)
        form.addRow("Passphrase", self.passphrase)
        form.addRow("Again", self.again)
        form.addRow("", self.show_text)
        self.fields = QtWidgets.QWidget()
        self.fields.setLayout(form)
        layout.addWidget(self.fields)
        self.hint = QtWidgets.QLabel()
        self.hint.setObjectName("passphrase_hint")
        self.hint.setStyleSheet(note_style("warning"))
        layout.addWidget(self.hint)
        layout.addStretch(1)
        self.passphrase.textChanged.connect(self._changed)
        self.again.textChanged.connect(self._changed)
        self.set_mode(use_keyring)

    def _show_toggled(self, shown: bool) -> None:
        """Both fields in clear text or both hidden: checking what was typed, or not."""
        mode = QtWidgets.QLineEdit.EchoMode
        for field in (self.passphrase, self.again):
            field.setEchoMode(mode.Normal if shown else mode.Password)

    def set_mode(self, use_keyring: bool, why: str = "") -> None:
        """Keyring (nothing to type) or passphrase (typed twice)."""
        self.use_keyring = use_keyring
        if os.environ.get(ENV_KEY):
            self.explain.setText(f"The key comes from the {ENV_KEY} environment variable.")
            self.use_keyring = True
        elif use_keyring:
            self.explain.setText(
                "MAMA creates a random key and keeps it in your OS keyring "
                f"({backend_name()}). You will not have to type anything."
            )
        else:
            self.explain.setText(
                (why + " " if why else "")
                + "No OS keyring is available, so choose a passphrase. You will type it each "
                "time MAMA starts."
            )
        self.backup.setText(key_backup_note(self._paths, self.use_keyring))
        self.fields.setVisible(not self.use_keyring)
        self._changed()

    def _changed(self) -> None:
        if not self.use_keyring:
            text, again = self.passphrase.text(), self.again.text()
            if text and len(text) < MIN_PASSPHRASE:
                self.hint.setText(f"At least {MIN_PASSPHRASE} characters.")
            elif again and again != text:
                self.hint.setText("The two passphrases differ.")
            else:
                self.hint.clear()
        else:
            self.hint.clear()
        self.completeChanged.emit()

    def isComplete(self) -> bool:
        if self.use_keyring:
            return True
        text = self.passphrase.text()
        return len(text) >= MIN_PASSPHRASE and text == self.again.text()

    def chosen_passphrase(self) -> str | None:
        return None if self.use_keyring else self.passphrase.text()


def key_backup_note(paths: Paths, use_keyring: bool) -> str:
    """Where the key lives, how to keep a copy, and what is lost without it."""
    lost = (
        "<br><b>Without it</b> your memory, and every copy of the data folder, cannot be "
        "opened by anyone, you included; nobody can recover it."
    )
    if os.environ.get(ENV_KEY):
        return f"<b>Back it up</b>: keep a copy of the value of <tt>{ENV_KEY}</tt>.{lost}"
    if use_keyring:
        entry = escape(keyring_account(paths.db))
        return (
            f"<b>Where the key lives</b>: the keyring entry with service "
            f"<tt>{KEYRING_SERVICE}</tt> and account <tt>{entry}</tt>."
            "<br><b>Back it up</b>: copy it into your password manager (on Linux: "
            f"<tt>secret-tool lookup service {KEYRING_SERVICE} username '{entry}'</tt>); "
            f"a reinstalled system or a reset keyring loses it.{lost}"
        )
    return (
        "<b>Back it up</b>: MAMA keeps no copy of the passphrase; write it down or keep it "
        f"in your password manager.{lost}"
    )


class MemoryPage(QtWidgets.QWizardPage):
    """Creates the store and builds the model, with a progress bar."""

    progressed = Signal(int, int, str)

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("memory_page")
        self.setTitle("Creating your memory")
        self.setSubTitle("The encrypted store, then the embedding model (built once).")
        layout = QtWidgets.QVBoxLayout(self)
        self.status = QtWidgets.QLabel("Starting…")
        self.status.setObjectName("memory_status")
        self.status.setWordWrap(True)
        self.bar = QtWidgets.QProgressBar()
        self.bar.setObjectName("memory_progress")
        self.bar.setRange(0, 0)
        layout.addWidget(self.status)
        layout.addWidget(self.bar)
        layout.addStretch(1)
        self.done = False
        self.progressed.connect(self.show_progress, Qt.ConnectionType.QueuedConnection)

    def show_progress(self, done: int, total: int, what: str) -> None:
        self.bar.setRange(0, max(total, 1))
        self.bar.setValue(min(done, max(total, 1)))
        self.status.setText(what)

    def finish(self, ok: bool, text: str) -> None:
        self.done = ok
        self.bar.setRange(0, 1)
        self.bar.setValue(1 if ok else 0)
        self.status.setText(text)
        self.status.setStyleSheet("" if ok else note_style("error"))
        self.completeChanged.emit()

    def isComplete(self) -> bool:
        return self.done


class TelegramPage(QtWidgets.QWizardPage):
    """Optional: the Telegram bot token, kept in the OS keyring."""

    def __init__(self, use_keyring: bool) -> None:
        super().__init__()
        self.setObjectName("telegram_page")
        self.setTitle("Talk to MAMA from Telegram")
        self.setSubTitle("Optional: you can also do this later in Settings.")
        layout = QtWidgets.QVBoxLayout(self)
        note = QtWidgets.QLabel()
        note.setObjectName("telegram_note")
        note.setWordWrap(True)
        self.token = QtWidgets.QLineEdit()
        self.token.setObjectName("telegram_token")
        self.token.setEchoMode(QtWidgets.QLineEdit.EchoMode.Password)
        note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        if token_from_environment():
            note.setText(environment_token_note())
            self.token.setEnabled(False)
        elif use_keyring:
            note.setText(
                "Create a bot with @BotFather and paste its token here. It is kept in your OS "
                "keyring, never in a file."
            )
        else:
            note.setText(no_keyring_token_note())
            self.token.setEnabled(False)
        # A field that cannot be typed in offers no choice to skip: the note says why.
        self.token.setPlaceholderText(TOKEN_PLACEHOLDER if self.token.isEnabled() else "")
        layout.addWidget(note)
        layout.addWidget(self.token)
        layout.addStretch(1)


class FirstRunWizard(QtWidgets.QWizard):
    """Key, memory, Telegram; ``memory`` is open once the wizard is accepted."""

    memory_ready = Signal()

    def __init__(
        self, paths: Paths, settings: Settings, parent: QtWidgets.QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("first_run")
        self.setWindowTitle("First run")
        self.setWizardStyle(QtWidgets.QWizard.WizardStyle.ClassicStyle)
        self.setMinimumSize(560, 380)
        self._paths = paths
        self._settings = settings
        self._tasks = TaskGroup(self._failed)
        self.memory: OpenMemory | None = None
        self._job: asyncio.Task[None] | None = None
        use_keyring = keyring_available()
        self.key_page = KeyPage(paths, use_keyring)
        self.memory_page = MemoryPage()
        self.telegram_page = TelegramPage(use_keyring)
        self.setPage(PAGE_KEY, self.key_page)
        self.setPage(PAGE_MEMORY, self.memory_page)
        self.setPage(PAGE_TELEGRAM, self.telegram_page)
        self.setOption(QtWidgets.QWizard.WizardOption.NoBackButtonOnLastPage, True)
        self.currentIdChanged.connect(self._page_changed)

    def _page_changed(self, page: int) -> None:
        if page == PAGE_MEMORY:
            self.memory_page.done = False
            self.memory_page.completeChanged.emit()
            self._then(self._create)
        elif page == PAGE_KEY and (self.memory is not None or self._job is not None):
            self._then(self._discard)

    def _then(self, step: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``step`` after the step before it (making and discarding never overlap)."""
        previous = self._job

        async def chained() -> None:
            if previous is not None:
                await asyncio.gather(previous, return_exceptions=True)
            await step()

        self._job = self._tasks.spawn(chained())

    async def _discard(self) -> None:
        """Back on the key page: the store made with the earlier choice goes."""
        memory, self.memory = self.memory, None
        if memory is not None:
            await asyncio.to_thread(discard_new_store, memory)

    async def _create(self) -> None:
        if self.memory is not None:  # already made with the current choice
            self.memory_page.finish(True, f"Your memory is ready in {self._paths.home}.")
            self.memory_ready.emit()
            return
        passphrase = self.key_page.chosen_passphrase()
        self.memory_page.status.setText("Creating the key and the encrypted store…")

        def ask(_prompt: str, _confirm: bool) -> str:
            if passphrase is None:
                raise KeyUnavailableError("No keyring accepted the key.")
            return passphrase

        try:
            key = await asyncio.to_thread(find_key, self._paths, ask)
            self.memory = await asyncio.to_thread(
                open_memory, self._paths, self._settings, key, self.memory_page.progressed.emit
            )
        except KeyUnavailableError as exc:
            log.info("first run: keyring unusable: %s", exc.message)
            self.key_page.set_mode(False, "The OS keyring did not accept the key.")
            self.memory_page.finish(False, "Go back and choose a passphrase.")
            return
        except MamaError as exc:
            self.memory_page.finish(False, exc.message)
            return
        self.memory_page.finish(True, f"Your memory is ready in {self._paths.home}.")
        self.memory_ready.emit()

    def _failed(self, exc: BaseException) -> None:
        log.error("first run failed", exc_info=exc)
        self.memory_page.finish(False, f"Something went wrong ({type(exc).__name__}); see the log.")

    def telegram_token(self) -> str:
        """The token typed on the last page ("" when skipped); the caller stores it."""
        return self.telegram_page.token.text().strip()

    async def aclose(self) -> None:
        """Wait for the store being made (a worker cannot be interrupted); if the owner
        cancelled, remove it, so the next start begins the first run again."""
        if self._job is not None:
            await asyncio.gather(self._job, return_exceptions=True)
        await self._tasks.aclose()
        if self.result() != QtWidgets.QDialog.DialogCode.Accepted and self.memory is not None:
            await self._discard()
