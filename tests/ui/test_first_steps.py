"""What a new owner is told: where the key lives and how to back it up, how to give a
Telegram token when there is no keyring (wizard, Settings, Pair dialog), and the
"what now" the review window shows once after the first run."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import keyring
import pytest
from pytestqt.qtbot import QtBot

from app.local.keys import keyring_account
from app.local.paths import Paths
from app.local.settings import Settings
from mama_core.embeddings import GgufEmbedder
from mama_core.memory import Engine, EngineConfig
from mama_core.store import DbKey, Store
from tests.conftest import TEST_KEY_HEX
from tests.ui.conftest import save_artifact, wait_signal, wait_until
from tests.ui.test_desktop import run_desktop
from tests.ui.test_settings import MemoryKeyring
from ui.desktop import Desktop
from ui.first_run import PAGE_TELEGRAM, FirstRunWizard, KeyPage, TelegramPage
from ui.qt import QtWidgets
from ui.settings.dialog import SettingsDialog
from ui.welcome import WelcomeNote

ENV_TOKEN = "MAMA_TELEGRAM_TOKEN"


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    ring = MemoryKeyring()
    keyring.set_keyring(ring)
    try:
        yield ring
    finally:
        keyring.set_keyring(previous)


def test_the_key_page_says_where_the_key_lives_and_how_to_back_it_up(
    paths: Paths, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_keyring = KeyPage(paths, use_keyring=True)
    qtbot.addWidget(with_keyring)
    backup = with_keyring.backup.text()
    # The exact keyring entry, a way to copy it, and what is lost without it.
    assert "service <tt>mama</tt>" in backup
    assert f"account <tt>{keyring_account(paths.db)}</tt>" in backup
    assert "secret-tool lookup service mama username" in backup
    assert "password manager" in backup and "cannot be opened" in backup
    save_artifact(with_keyring, "first-run-key-keyring.png")

    with_passphrase = KeyPage(paths, use_keyring=False)
    qtbot.addWidget(with_passphrase)
    backup = with_passphrase.backup.text()
    assert "no copy of the passphrase" in backup and "cannot be opened" in backup
    assert "keyring entry" not in backup  # positive control: the text follows the mode

    monkeypatch.setenv("MAMA_DB_KEY", TEST_KEY_HEX)
    from_env = KeyPage(paths, use_keyring=False)
    qtbot.addWidget(from_env)
    assert "copy of the value of <tt>MAMA_DB_KEY</tt>" in from_env.backup.text()


def test_the_wizard_with_a_keyring_shows_the_entry_on_its_first_page(
    paths: Paths, memory_keyring: MemoryKeyring, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    wizard = FirstRunWizard(paths, Settings())
    qtbot.addWidget(wizard)
    wizard.show()
    assert wizard.key_page.use_keyring
    assert wizard.key_page.backup.isVisibleTo(wizard)
    assert keyring_account(paths.db) in wizard.key_page.backup.text()
    save_artifact(wizard, "first-run-key-keyring-wizard.png")
    wizard.close()
    assert not paths.db.exists()  # nothing is made before Next


def test_without_a_keyring_the_wizard_explains_the_token_variable(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = TelegramPage(use_keyring=False)
    qtbot.addWidget(page)
    note = page.findChild(QtWidgets.QLabel, "telegram_note")
    assert note is not None
    text = note.text()
    assert "No OS keyring" in text and ENV_TOKEN in text
    assert "environment" in text and "mama daemon" in text and "does not store it" in text
    assert "in Settings" not in text  # no circle back to Settings
    assert not page.token.isEnabled()
    save_artifact(page, "first-run-telegram-no-keyring.png")

    with_keyring = TelegramPage(use_keyring=True)  # control: with a keyring, the field
    qtbot.addWidget(with_keyring)
    assert with_keyring.token.isEnabled()
    assert ENV_TOKEN not in with_keyring.findChild(QtWidgets.QLabel, "telegram_note").text()

    monkeypatch.setenv(ENV_TOKEN, "123456:not-a-real-token")
    from_env = TelegramPage(use_keyring=True)
    qtbot.addWidget(from_env)
    env_note = from_env.findChild(QtWidgets.QLabel, "telegram_note").text()
    assert f"comes from <tt>{ENV_TOKEN}</tt>" in env_note and not from_env.token.isEnabled()


def _settings(qtbot: QtBot, keyring_ok: bool, tmp: Paths) -> SettingsDialog:
    dialog = SettingsDialog(
        None,
        settings=Settings(),
        data_folder=tmp.home,
        keyring_ok=keyring_ok,
        token_stored=False,
        start_at_login=False,
    )
    qtbot.addWidget(dialog)
    return dialog


def test_settings_without_a_keyring_explain_the_token_variable(
    paths: Paths, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    dialog = _settings(qtbot, False, paths)
    text = dialog.token_note.text()
    assert ENV_TOKEN in text and "environment" in text and "does not store it" in text
    assert not dialog.token.isEnabled()
    save_artifact(dialog, "settings-no-keyring.png")
    with_keyring = _settings(qtbot, True, paths)  # control
    assert with_keyring.token.isEnabled() and ENV_TOKEN not in with_keyring.token_note.text()

    # A token from the environment wins over the keyring: typing one would be ignored.
    monkeypatch.setenv(ENV_TOKEN, "123456:not-a-real-token")
    from_env = _settings(qtbot, True, paths)
    assert not from_env.token.isEnabled()
    assert f"comes from <tt>{ENV_TOKEN}</tt>" in from_env.token_note.text()


@pytest.fixture
def existing_store(paths: Paths, embedder: GgufEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    with (
        Store.open(paths.db, DbKey.from_secret(TEST_KEY_HEX)) as store,
        Engine(store, embedder, EngineConfig()),
    ):
        pass
    monkeypatch.setenv("MAMA_DB_KEY", TEST_KEY_HEX)
    monkeypatch.setenv("MAMA_CACHE_DIR", str(paths.cache))


def test_the_pair_dialog_without_token_or_keyring_names_the_variable(
    paths: Paths, existing_store: None, loop: asyncio.AbstractEventLoop
) -> None:
    desktop = Desktop(paths)
    boxes: list[QtWidgets.QDialog] = []
    desktop.dialog_opened.connect(boxes.append)

    async def scenario() -> str:
        await wait_until(desktop.tray.pause_action.isEnabled, desktop.agent.changed)
        desktop.tray.pair_action.trigger()
        await wait_until(lambda: bool(boxes), desktop.dialog_opened)
        box = boxes[-1]
        assert isinstance(box, QtWidgets.QMessageBox) and box.objectName() == "pair_dialog"
        text = box.text()
        box.accept()
        return text

    code, text = run_desktop(loop, desktop, scenario)
    assert code == 0
    assert "No Telegram bot token is set" in text
    assert ENV_TOKEN in text and "environment" in text
    assert "put its token in Settings" not in text


def test_the_pair_dialog_with_a_keyring_points_to_settings(
    paths: Paths,
    existing_store: None,
    memory_keyring: MemoryKeyring,
    loop: asyncio.AbstractEventLoop,
) -> None:
    """The control: where a keyring works, Settings is the right place for the token."""
    desktop = Desktop(paths)
    boxes: list[QtWidgets.QDialog] = []
    desktop.dialog_opened.connect(boxes.append)

    async def scenario() -> str:
        await wait_until(desktop.tray.pause_action.isEnabled, desktop.agent.changed)
        desktop.tray.pair_action.trigger()
        await wait_until(lambda: bool(boxes), desktop.dialog_opened)
        text = boxes[-1].text()  # type: ignore[attr-defined]
        boxes[-1].accept()
        return str(text)

    code, text = run_desktop(loop, desktop, scenario)
    assert code == 0
    assert "put its token in Settings" in text and ENV_TOKEN not in text


def test_after_finish_the_review_window_opens_once_with_what_now(
    paths: Paths, loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAMA_DB_KEY", TEST_KEY_HEX)
    monkeypatch.setenv("MAMA_CACHE_DIR", str(paths.cache))
    desktop = Desktop(paths)
    seen: dict[str, object] = {}

    async def wizard_steps() -> None:
        (wizard,) = await wait_signal(desktop.dialog_opened, 30)
        assert isinstance(wizard, FirstRunWizard)
        ready = asyncio.ensure_future(wait_signal(wizard.memory_ready, 120))
        wizard.next()
        await ready
        wizard.next()
        assert wizard.currentId() == PAGE_TELEGRAM
        wizard.button(QtWidgets.QWizard.WizardButton.FinishButton).click()

    async def first() -> None:
        steps = asyncio.ensure_future(wizard_steps())
        loaded = asyncio.ensure_future(wait_signal(desktop.review_loaded, 120))
        app = asyncio.ensure_future(desktop.run())
        try:
            await steps
            await loaded
            window = desktop.window
            assert window is not None and window.isVisible()
            note = desktop.welcome
            assert isinstance(note, WelcomeNote) and note.isVisibleTo(window)
            seen["text"] = note.text.text()
            save_artifact(window, "review-after-first-run.png")
            note.close_button.click()
            seen["hidden"] = not note.isVisibleTo(window)
        finally:
            desktop.quit()
        assert await asyncio.wait_for(app, 30) == 0

    loop.run_until_complete(first())
    text = str(seen["text"])
    assert text.count("<br>") == 2  # three lines
    assert "Pair Telegram" in text and "Proposed" in text and "Purge" in text
    assert seen["hidden"] is True

    # The next start opens no window by itself, and the window it opens has no note.
    again = Desktop(paths)

    async def second() -> bool:
        assert again.window is None
        loaded = asyncio.ensure_future(wait_signal(again.review_loaded, 60))
        again.show_review()
        await loaded
        return again.welcome is None and again.window is not None

    code, fine = run_desktop(loop, again, second)
    assert code == 0 and fine
