"""The first-run wizard: a passphrase where no keyring works, the store and model made
on a worker with a progress bar, Telegram offered; cancelling creates nothing."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app.local.keys import KeyOrigin
from app.local.paths import Paths
from app.local.settings import Settings
from mama_core.errors import WrongKeyError
from mama_core.store import DbKey, Store
from tests.conftest import TEST_KEY_HEX
from tests.ui.conftest import save_artifact, wait_signal
from ui.desktop import Desktop
from ui.first_run import PAGE_KEY, PAGE_MEMORY, PAGE_TELEGRAM, FirstRunWizard
from ui.qt import QtCore, QtWidgets

PASSPHRASE = "a long walk on the beach"


@pytest.fixture
def cache_only(paths: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAMA_CACHE_DIR", str(paths.cache))


def test_first_run_with_a_passphrase(
    paths: Paths, cache_only: None, loop: asyncio.AbstractEventLoop
) -> None:
    assert not paths.db.exists()
    desktop = Desktop(paths)
    seen: dict[str, Any] = {}

    async def wizard_steps() -> None:
        (wizard,) = await wait_signal(desktop.dialog_opened, 30)
        assert isinstance(wizard, FirstRunWizard)
        key_page = wizard.key_page
        # No keyring in this environment: a passphrase, typed twice.
        assert not key_page.use_keyring and key_page.fields.isVisibleTo(wizard)
        next_button = wizard.button(QtWidgets.QWizard.WizardButton.NextButton)
        assert not next_button.isEnabled()
        key_page.passphrase.setText(PASSPHRASE)
        key_page.again.setText(PASSPHRASE + "!")
        assert not next_button.isEnabled()
        assert "differ" in key_page.hint.text()
        key_page.again.setText(PASSPHRASE)
        assert next_button.isEnabled()
        save_artifact(wizard, "first-run-key.png")
        ready = asyncio.ensure_future(wait_signal(wizard.memory_ready, 120))
        next_button.click()
        assert wizard.currentId() == PAGE_MEMORY
        await ready
        assert wizard.memory_page.isComplete()
        seen["status"] = wizard.memory_page.status.text()
        wizard.next()
        assert wizard.currentId() == PAGE_TELEGRAM
        seen["token_enabled"] = wizard.telegram_page.token.isEnabled()
        save_artifact(wizard, "first-run-telegram.png")
        wizard.button(QtWidgets.QWizard.WizardButton.FinishButton).click()

    async def scenario() -> Any:
        assert desktop.memory is not None
        return desktop.memory.key.origin

    async def whole() -> tuple[int, Any]:
        steps = asyncio.ensure_future(wizard_steps())
        code, origin = await _run(desktop, scenario)
        await steps
        return code, origin

    code, origin = loop.run_until_complete(whole())
    assert code == 0
    assert origin is KeyOrigin.PASSPHRASE
    assert "ready" in seen["status"]
    assert seen["token_enabled"] is False
    # The store exists, opens with the passphrase and refuses anything else.
    with Store.open(paths.db, DbKey(PASSPHRASE, raw=False)) as store:
        assert store.schema_version > 0
    with pytest.raises(WrongKeyError):
        Store.open(paths.db, DbKey.from_secret(TEST_KEY_HEX))


async def _run(desktop: Desktop, scenario: Any) -> tuple[int, Any]:
    ready = asyncio.ensure_future(wait_signal(desktop.ready, 120))
    app = asyncio.ensure_future(desktop.run())
    await asyncio.wait([ready, app], return_when=asyncio.FIRST_COMPLETED)
    try:
        result = await scenario()
    finally:
        desktop.quit()
    return await asyncio.wait_for(app, 30), result


def test_cancelling_the_wizard_creates_nothing(
    paths: Paths, cache_only: None, monkeypatch: pytest.MonkeyPatch, loop: Any
) -> None:
    monkeypatch.setenv("MAMA_DB_KEY", TEST_KEY_HEX)
    desktop = Desktop(paths)
    texts: list[str] = []

    def cancel(wizard: Any) -> None:
        texts.append(wizard.key_page.explain.text())
        assert not wizard.key_page.fields.isVisibleTo(wizard)
        QtCore.QTimer.singleShot(0, wizard.reject)

    desktop.dialog_opened.connect(cancel)

    async def whole() -> int:
        return await asyncio.wait_for(desktop.run(), 30)

    assert loop.run_until_complete(whole()) == 0
    assert "MAMA_DB_KEY" in texts[0]
    assert not paths.db.exists()


def test_a_passphrase_changed_after_back_is_the_one_that_opens_the_store(
    paths: Paths, cache_only: None, loop: asyncio.AbstractEventLoop
) -> None:
    """Passphrase A, Next (the store is made), Back, passphrase B, Next, Finish: the
    store opens with B and refuses A."""
    first, second = "the first passphrase", "the second passphrase"
    desktop = Desktop(paths)

    async def wizard_steps() -> None:
        (wizard,) = await wait_signal(desktop.dialog_opened, 30)
        assert isinstance(wizard, FirstRunWizard)
        key_page = wizard.key_page
        key_page.passphrase.setText(first)
        key_page.again.setText(first)
        ready = asyncio.ensure_future(wait_signal(wizard.memory_ready, 120))
        wizard.next()
        await ready
        wizard.back()
        assert wizard.currentId() == PAGE_KEY
        key_page.passphrase.setText(second)
        key_page.again.setText(second)
        ready = asyncio.ensure_future(wait_signal(wizard.memory_ready, 120))
        wizard.next()
        assert wizard.currentId() == PAGE_MEMORY
        await ready
        wizard.next()
        assert wizard.currentId() == PAGE_TELEGRAM
        wizard.button(QtWidgets.QWizard.WizardButton.FinishButton).click()

    async def scenario() -> Any:
        assert desktop.memory is not None
        return desktop.memory.key.origin

    async def whole() -> tuple[int, Any]:
        steps = asyncio.ensure_future(wizard_steps())
        code, origin = await _run(desktop, scenario)
        await steps
        return code, origin

    code, origin = loop.run_until_complete(whole())
    assert code == 0 and origin is KeyOrigin.PASSPHRASE
    with Store.open(paths.db, DbKey(second, raw=False)) as store:
        assert store.schema_version > 0
    with pytest.raises(WrongKeyError):
        Store.open(paths.db, DbKey(first, raw=False))


def test_cancelling_after_the_store_was_made_leaves_none(
    paths: Paths, cache_only: None, loop: asyncio.AbstractEventLoop
) -> None:
    desktop = Desktop(paths)
    made: list[bool] = []

    async def wizard_steps() -> None:
        (wizard,) = await wait_signal(desktop.dialog_opened, 30)
        assert isinstance(wizard, FirstRunWizard)
        wizard.key_page.passphrase.setText(PASSPHRASE)
        wizard.key_page.again.setText(PASSPHRASE)
        ready = asyncio.ensure_future(wait_signal(wizard.memory_ready, 120))
        wizard.next()
        await ready
        made.append(paths.db.exists())  # control: the store was there before Cancel
        wizard.reject()

    async def whole() -> int:
        steps = asyncio.ensure_future(wizard_steps())
        code = await asyncio.wait_for(desktop.run(), 120)
        await steps
        return code

    assert loop.run_until_complete(whole()) == 0
    assert made == [True]
    assert not paths.db.exists()


def test_the_key_page_says_what_mama_is_and_can_show_the_passphrase(
    paths: Paths, qtbot: Any
) -> None:
    wizard = FirstRunWizard(paths, Settings())
    qtbot.addWidget(wizard)
    page = wizard.key_page
    assert "personal work agent" in page.about.text()
    page.passphrase.setText(PASSPHRASE)
    page.again.setText(PASSPHRASE)
    hidden = QtWidgets.QLineEdit.EchoMode.Password
    assert page.passphrase.echoMode() == hidden and page.again.echoMode() == hidden
    page.show_text.setChecked(True)
    shown = QtWidgets.QLineEdit.EchoMode.Normal
    assert page.passphrase.echoMode() == shown and page.again.echoMode() == shown
    page.show_text.setChecked(False)
    assert page.passphrase.echoMode() == hidden


def test_a_token_field_that_cannot_be_typed_in_offers_no_skip(
    paths: Paths, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No keyring here: the token field is greyed out, and says nothing about leaving
    it empty; where a keyring works (the control) it offers to skip."""
    from ui import first_run

    wizard = FirstRunWizard(paths, Settings())
    qtbot.addWidget(wizard)
    token = wizard.telegram_page.token
    assert not token.isEnabled() and token.placeholderText() == ""
    keyed = first_run.TelegramPage(use_keyring=True)
    qtbot.addWidget(keyed)
    assert keyed.token.isEnabled() and "leave empty to skip" in keyed.token.placeholderText()
