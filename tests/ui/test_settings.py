"""Settings: saved to the settings file, start at login as an XDG autostart entry, the
Telegram token only ever in the keyring, a new data folder on the next start, and a
new embedding model re-embedding every memory."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import keyring.backend
import pytest

from app.local.paths import Paths
from mama_core.embeddings import GgufEmbedder
from mama_core.memory import Engine, EngineConfig
from mama_core.store import DbKey, Store
from tests.conftest import TEST_KEY_HEX
from tests.ui.conftest import agent_propose, owner_save, wait_signal, wait_until
from tests.ui.test_desktop import run_desktop
from ui import autostart
from ui.desktop import Desktop
from ui.qt import QtWidgets
from ui.settings import data_location
from ui.settings.dialog import SettingsDialog


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A working keyring that lives in this process only."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.secrets: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.secrets.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.secrets[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.secrets.pop((service, username), None)


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    ring = MemoryKeyring()
    keyring.set_keyring(ring)
    try:
        yield ring
    finally:
        keyring.set_keyring(previous)


@pytest.fixture
def started(
    paths: Paths, embedder: GgufEmbedder, monkeypatch: pytest.MonkeyPatch
) -> dict[str, int]:
    with (
        Store.open(paths.db, DbKey.from_secret(TEST_KEY_HEX)) as store,
        Engine(store, embedder, EngineConfig()) as engine,
    ):
        ids = {
            "proposal": agent_propose(engine, "Answer in short paragraphs"),
            "fact": owner_save(engine, "The staging host is kestrel"),
        }
    monkeypatch.setenv("MAMA_DB_KEY", TEST_KEY_HEX)
    monkeypatch.setenv("MAMA_CACHE_DIR", str(paths.cache))
    return ids


async def edit_settings(desktop: Desktop, change: Any) -> Any:
    """Open Settings from the tray, let ``change(dialog)`` edit it, save, wait till applied."""
    opened = asyncio.ensure_future(wait_signal(desktop.dialog_opened))
    desktop.tray.settings_action.trigger()
    (dialog,) = await opened
    assert isinstance(dialog, SettingsDialog)
    change(dialog)
    applied = asyncio.ensure_future(wait_signal(desktop.settings_applied, 120))
    dialog.accept()
    (settings,) = await applied
    return settings


def test_settings_saved_and_start_at_login(
    paths: Paths, started: dict[str, int], loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    desktop = Desktop(paths)
    seen: dict[str, Any] = {}

    def change(dialog: SettingsDialog) -> None:
        seen["folder"] = dialog.data_folder.text()
        seen["token_enabled"] = dialog.token.isEnabled()
        seen["token_note"] = dialog.token_note.text()
        page = dialog.connectors_page  # the memory is open: its Connectors page works
        seen["connectors"] = page is not None and page.isEnabled()
        dialog.backend.setCurrentIndex(dialog.backend.findData("claude-code"))
        dialog.budget.setValue(2500)
        # Tokens said in words too, following the value.
        assert dialog.budget.text() == "2500 tokens (about 1,900 words)"
        dialog.autostart.setChecked(True)

    async def scenario() -> None:
        await edit_settings(desktop, change)
        entry = autostart.entry_path()
        assert entry == tmp_path / "xdg-config" / "autostart" / "mama.desktop"
        text = entry.read_text("utf-8")
        assert "Exec=" in text and "Name=MAMA" in text
        await edit_settings(desktop, lambda d: d.autostart.setChecked(False))
        assert not entry.exists()

    code, _ = run_desktop(loop, desktop, scenario)
    assert code == 0
    assert seen["folder"] == str(paths.home)
    # No keyring here: the token cannot be kept, and the dialog says so.
    assert seen["token_enabled"] is False
    assert "No OS keyring" in seen["token_note"]
    assert seen["connectors"] is True
    saved = json.loads(paths.settings.read_text("utf-8"))
    assert saved == {"agent_backend": "claude-code", "guidance_budget_tokens": 2500}


def test_telegram_token_only_in_the_keyring(
    paths: Paths,
    started: dict[str, int],
    memory_keyring: MemoryKeyring,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    desktop = Desktop(paths)
    token = "123456789:AAF-test-token-never-in-a-file"

    def change(dialog: SettingsDialog) -> None:
        assert dialog.token.isEnabled()
        dialog.token.setText(token)

    async def scenario() -> None:
        await edit_settings(desktop, change)
        assert memory_keyring.secrets[("mama", "telegram-bot-token")] == token

        def forget(dialog: SettingsDialog) -> None:
            assert "A token is stored" in dialog.token.placeholderText()
            dialog.forget_token.click()

        await edit_settings(desktop, forget)
        assert ("mama", "telegram-bot-token") not in memory_keyring.secrets

    code, _ = run_desktop(loop, desktop, scenario)
    assert code == 0
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.suffix != ".db":
            assert token.encode() not in path.read_bytes(), path


def test_new_data_folder_takes_effect_next_start(
    paths: Paths,
    started: dict[str, int],
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    desktop = Desktop(paths)
    elsewhere = tmp_path / "elsewhere"
    notes: list[str] = []
    desktop.notified.connect(lambda title, _text: notes.append(title))

    async def scenario() -> None:
        await edit_settings(desktop, lambda d: d.set_data_folder(str(elsewhere)))

    code, _ = run_desktop(loop, desktop, scenario)
    assert code == 0
    assert "Data folder changed" in notes
    assert data_location.chosen_home() == elsewhere
    # Next start: used unless MAMA_HOME says otherwise.
    monkeypatch.setenv("MAMA_HOME", str(paths.home))
    data_location.apply_chosen_home()
    assert data_location.os.environ["MAMA_HOME"] == str(paths.home)
    monkeypatch.delenv("MAMA_HOME")
    data_location.apply_chosen_home()
    assert data_location.os.environ["MAMA_HOME"] == str(elsewhere)


def test_new_embedding_model_reembeds_every_memory(
    paths: Paths,
    started: dict[str, int],
    embedder: GgufEmbedder,
    loop: asyncio.AbstractEventLoop,
) -> None:
    # The same weights from an explicit path carry another model id, so every memory
    # needs a vector again: a real re-embedding.
    model_file = embedder.model_path
    desktop = Desktop(paths)
    progress: list[int] = []

    async def scenario() -> dict[str, Any]:
        await edit_settings(desktop, lambda d: d.model_path.setText(str(model_file)))
        assert desktop.memory is not None and desktop.bridge is not None
        new_id = desktop.memory.embedder.model_id
        reader = desktop.memory.store.new_connection()
        try:
            vectors = reader.execute(
                "SELECT count(*) FROM embeddings WHERE model_id = ?", (new_id,)
            ).fetchone()[0]
            judgments = reader.execute(
                "SELECT count(*) FROM judgments WHERE status != 'purged'"
            ).fetchone()[0]
        finally:
            reader.close()
        # The new engine serves the windows and still announces changes.
        tray = desktop.tray
        receipt = await desktop.bridge.dispatch("review.approve", {"id": started["proposal"]})
        await wait_until(lambda: tray.waiting == 0, tray.changed)
        found = await desktop.bridge.dispatch("memory.search", {"query": "staging host"})
        return {
            "model_id": new_id,
            "vectors": vectors,
            "judgments": judgments,
            "approved": receipt["status"],
            "found": [hit["id"] for hit in found["results"]],
        }

    desktop.dialog_opened.connect(lambda _d: progress.append(1))
    code, result = run_desktop(loop, desktop, scenario)
    assert code == 0
    assert result["model_id"] != embedder.model_id
    assert result["vectors"] == result["judgments"] == 2
    assert result["approved"] == "active"
    assert started["fact"] in result["found"]
    saved = json.loads(paths.settings.read_text("utf-8"))
    assert saved["embedding_model_path"] == str(model_file)


def test_choosing_the_local_model_backend_restarts_the_agent_with_that_model(
    paths: Paths, started: dict[str, int], loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    desktop = Desktop(paths)
    model = tmp_path / "chat.gguf"
    enabled: dict[str, bool] = {}

    def change(dialog: SettingsDialog) -> None:
        enabled["before"] = dialog.chat_model.isEnabled()  # commands only: not used
        dialog.backend.setCurrentIndex(dialog.backend.findData("local-gguf"))
        enabled["after"] = dialog.chat_model.isEnabled()
        dialog.chat_model.setText(str(model))

    async def scenario() -> None:
        status = desktop.tray.agent_status_action
        await wait_until(
            lambda: status.text().startswith("Agent: command mode"), desktop.tray.changed
        )
        first_host = desktop.agent.host
        await edit_settings(desktop, change)
        assert desktop.agent.host is not None and desktop.agent.host is not first_host
        assert status.text().startswith("Agent: local model")
        runtime = desktop.agent.host.runtime
        assert runtime is not None
        assert getattr(runtime.backend, "model_path", None) == model

    code, _ = run_desktop(loop, desktop, scenario)
    assert code == 0
    assert enabled == {"before": False, "after": True}
    saved = json.loads(paths.settings.read_text("utf-8"))
    assert saved == {"agent_backend": "local-gguf", "local_model_path": str(model)}


def test_every_backend_the_dialog_offers_is_one_the_runtime_builds(
    store: Store, tmp_path: Path
) -> None:
    from app.backends.factory import UnknownBackendError, make_backend
    from app.durable.transaction import RuntimeDb
    from ui.settings.dialog import AGENT_BACKENDS

    db = RuntimeDb(store.new_connection(), store.path)
    try:
        built = {
            value: make_backend(value, tmp_path, db, "prompt").name for value, _ in AGENT_BACKENDS
        }
        with pytest.raises(UnknownBackendError):  # control: a name nobody offers
            make_backend("gpt-9", tmp_path, db, "prompt")
    finally:
        db.close()
    assert built == {
        "command": "command-mode",
        "claude-code": "claude-code",
        "codex": "codex",
        "local-gguf": "local-gguf",
    }


def test_agent_scopes_are_checked_before_the_dialog_closes(qtbot: Any, tmp_path: Path) -> None:
    from app.local.settings import Settings

    dialog = SettingsDialog(
        None,
        settings=Settings(),
        data_folder=tmp_path,
        keyring_ok=False,
        token_stored=False,
        start_at_login=False,
    )
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.agent_scopes.text() == "global"
    dialog.agent_scopes.setText("global, phoenix")  # not a scope name
    dialog.accept()
    assert dialog.isVisible() and dialog.result() != QtWidgets.QDialog.DialogCode.Accepted
    assert dialog.problem.isVisible()
    assert dialog.problem.text().startswith(
        "Agent reads and saves in: a scope is 'global', 'user:NAME'"
    )

    dialog.agent_scopes.setText("project:phoenix, global")  # the control: a valid list
    dialog.accept()
    assert dialog.result() == QtWidgets.QDialog.DialogCode.Accepted
    assert dialog.choice().settings.agent_scopes == ("project:phoenix", "global")
