"""After an update changes the model, the tray says how far re-embedding has got while
the memory stays usable, and the line goes away when every memory has its vector."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from app.local.paths import Paths
from mama_core.embeddings import GgufEmbedder
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.recall import count_missing
from mama_core.store import DbKey, Store
from tests.conftest import TEST_KEY_HEX
from tests.ui.conftest import wait_until
from tests.ui.test_desktop import run_desktop
from ui.desktop import Desktop


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch, paths: Paths) -> None:
    monkeypatch.setenv("MAMA_DB_KEY", TEST_KEY_HEX)
    monkeypatch.setenv("MAMA_CACHE_DIR", str(paths.cache))


def test_the_tray_shows_the_catch_up_and_hides_it_when_done(
    paths: Paths,
    keyed: None,
    loop: asyncio.AbstractEventLoop,
    embedder: GgufEmbedder,
    tmp_path: Path,
) -> None:
    key = DbKey.from_secret(TEST_KEY_HEX)
    with Store.open(paths.db, key) as store, Engine(store, embedder) as engine:
        payloads = [
            {"kind": "fact", "summary": f"Locker {i} is by door {i % 3}"} for i in range(40)
        ]
        engine.dispatch_batch(
            "memory.save", list(payloads), SessionFacts.owner_cli(), Grant.owner()
        )
    new_model = tmp_path / "new-model.gguf"
    new_model.write_bytes(embedder.model_path.read_bytes())
    new_id = GgufEmbedder(new_model).model_id
    paths.settings.write_text(json.dumps({"embedding_model_path": str(new_model)}))

    desktop = Desktop(paths)
    tray = desktop.tray
    shown: list[str] = []
    desktop.catch_up_status.progressed.connect(shown.append)

    async def scenario() -> None:
        status = desktop.catch_up_status
        await wait_until(lambda: "" in shown, status.progressed, timeout=300)
        # The line is hidden again once the last batch is in.
        await wait_until(lambda: tray.catch_up_text is None, tray.changed, timeout=30)

    code, _ = run_desktop(loop, desktop, scenario)
    assert code == 0
    # The first line is where the catch-up stood when the tray began to follow it
    # (0 of 40 unless the model was very quick); the last one hides the line.
    assert shown[0].startswith("Updating memory search for the new model: ")
    assert (
        shown[0].endswith(" of 40")
        and shown[0] != "Updating memory search for the new model: 40 of 40"
    )
    assert shown[-1] == ""
    assert not tray.catch_up_action.isVisible()
    with Store.open(paths.db, key) as store:
        assert count_missing(store.conn, new_id) == 0


def test_the_tray_line_and_tooltip(qapp: object) -> None:
    from ui.tray import Tray

    tray = Tray()
    tray.set_ready()
    assert not tray.catch_up_action.isVisible() and "\n" not in tray.tooltip()
    tray.set_catch_up("Updating memory search for the new model: 120 of 900")
    assert tray.catch_up_action.isVisible()
    assert tray.catch_up_action.text() == "Updating memory search for the new model: 120 of 900"
    assert tray.tooltip().endswith("\nUpdating memory search for the new model: 120 of 900")
    tray.set_catch_up(None)
    assert not tray.catch_up_action.isVisible() and "\n" not in tray.tooltip()
    tray.deleteLater()
