"""Applying what the owner chose in Settings: the settings file, a new embedding
model (re-embedding first), the data folder for the next start, the Telegram
token in the keyring, and the autostart entry. Slow or blocking steps run off
the UI thread."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from app.local.settings import Settings
from ui import autostart
from ui.os_keyring import keyring_available, load_telegram_token, store_telegram_token
from ui.settings.data_location import set_chosen_home
from ui.settings.dialog import SettingsChoice, SettingsDialog

if TYPE_CHECKING:
    from mama_core.store import Store
    from ui.bridge import EngineBridge
    from ui.memory_session import OpenMemory
    from ui.qt import QtWidgets
    from ui.settings.connectors_page import ConnectorsPage

log = logging.getLogger(__name__)

Notify = Callable[[str, str], None]


async def settings_dialog(
    parent: QtWidgets.QWidget | None,
    settings: Settings,
    data_folder: Path,
    *,
    settings_path: Path | None = None,
    store: Store | None = None,
) -> SettingsDialog:
    """The dialog filled with the current settings (the keyring is asked off the UI thread).

    With ``settings_path`` it has a Connectors page, working once ``store`` (the open
    memory) is given; its list is read from the file and the store before it shows."""
    keyring_ok = await asyncio.to_thread(keyring_available)
    token_stored = keyring_ok and bool(await asyncio.to_thread(load_telegram_token))
    page: ConnectorsPage | None = None
    if settings_path is not None:
        from app.admin.connectors import open_connector_store
        from ui.settings.connectors_page import ConnectorsPage

        opener = None if store is None else (lambda: open_connector_store(store))
        page = ConnectorsPage(settings_path, opener, keyring_ok=keyring_ok)
        await page.reload()
        connectors = page.connectors()
        if connectors is not None:  # the file's connectors are newer than a cached copy
            settings = settings.model_copy(update={"connectors": connectors})
    return SettingsDialog(
        parent,
        settings=settings,
        data_folder=data_folder,
        keyring_ok=keyring_ok,
        token_stored=token_stored,
        start_at_login=autostart.is_enabled(),
        connectors=page,
    )


async def apply_choice(
    choice: SettingsChoice,
    before: Settings,
    *,
    settings_path: Path,
    memory: OpenMemory | None,
    bridge: EngineBridge | None,
    parent: QtWidgets.QWidget | None,
    notify: Notify,
) -> Settings:
    """Carry out ``choice``; returns the settings now in force (and saved)."""
    new = choice.settings
    if choice.model_changed(before) and memory is not None and bridge is not None:
        from ui.settings.model_change import change_model

        if not await change_model(
            memory, bridge, new.embedding_model_path, parent, builtin=new.embedding_model
        ):
            new = new.model_copy(
                update={
                    "embedding_model_path": before.embedding_model_path,
                    "embedding_model": before.embedding_model,
                }
            )
    await asyncio.to_thread(new.save, settings_path)
    if memory is not None:
        memory.settings = new
    if choice.data_folder is not None:
        await asyncio.to_thread(set_chosen_home, choice.data_folder)
        notify(
            "Data folder changed", f"MAMA will use {choice.data_folder} the next time it starts."
        )
    if choice.telegram_token is not None:
        await store_token(choice.telegram_token, notify)
    if choice.start_at_login != autostart.is_enabled():
        await asyncio.to_thread(autostart.set_enabled, choice.start_at_login)
    log.info("settings saved")
    return new


async def store_token(token: str, notify: Notify) -> None:
    """Keep the Telegram token in the keyring ("" forgets it); say so if it cannot."""
    try:
        await asyncio.to_thread(store_telegram_token, token)
    except Exception as exc:
        log.warning("telegram token not stored: %s", type(exc).__name__)
        notify(
            "Telegram token not saved",
            "The OS keyring did not take the token; it was not written anywhere else.",
        )
