"""Quit closes what the app holds explicitly and in order — the runtime, the engine's
writer and readers, the WAL, the store, then the llama.cpp model — instead of leaving
llama.cpp and Qt objects to the garbage collector at interpreter exit (issue: a
``bool_dealloc`` abort on Quit after a passphrase first run)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from app.local.paths import Paths
from app.serve.host import runtime_running
from mama_core.embeddings import GgufEmbedder
from mama_core.store import DbKey, Store
from tests.ui.conftest import wait_until
from tests.ui.test_desktop import run_desktop
from ui.desktop import Desktop
from ui.memory_session import OpenMemory
from ui.qt import QtCore

PASSPHRASE = "correct horse battery"


def test_quit_after_the_passphrase_path_closes_everything_in_order(
    paths: Paths,
    embedder: GgufEmbedder,
    monkeypatch: pytest.MonkeyPatch,
    loop: asyncio.AbstractEventLoop,
) -> None:
    with Store.open(paths.db, DbKey(PASSPHRASE, raw=False)):
        pass
    monkeypatch.setenv("MAMA_CACHE_DIR", str(paths.cache))
    desktop = Desktop(paths)

    def answer(dialog: Any) -> None:
        dialog.setTextValue(PASSPHRASE)
        QtCore.QTimer.singleShot(0, dialog.accept)

    desktop.dialog_opened.connect(answer)
    held: dict[str, Any] = {}
    order: list[str] = []

    async def scenario() -> None:
        memory = desktop.memory
        assert isinstance(memory, OpenMemory)
        await asyncio.to_thread(memory.embedder.embed_one, "the model is loaded")
        assert memory.embedder.is_loaded  # control for the check after Quit
        await wait_until(lambda: desktop.agent.host is not None, desktop.agent.changed, 30)
        assert runtime_running(paths)
        held.update(memory=memory, engine=memory.engine, store=memory.store)
        # Record the order in which the parts are closed.
        for name, part in (
            ("engine", memory.engine),
            ("store", memory.store),
            ("embedder", memory.embedder),
        ):
            original = part.close

            def close(original: Any = original, name: str = name) -> None:
                order.append(name)
                original()

            monkeypatch.setattr(part, "close", close)
        host = desktop.agent.host
        assert host is not None
        original_stop = host.stop

        async def stop() -> None:
            order.append("runtime")
            await original_stop()

        monkeypatch.setattr(host, "stop", stop)

    code, _ = run_desktop(loop, desktop, scenario)
    assert code == 0
    assert order == ["runtime", "engine", "store", "embedder"]
    memory = held["memory"]
    assert desktop.memory is None
    assert not memory.embedder.is_loaded
    assert not runtime_running(paths)
    assert not Path(f"{paths.db}-wal").exists()
    with pytest.raises(Exception, match="closed"):
        held["store"].conn.execute("SELECT 1")


def test_quit_while_the_first_run_wizard_waits_ends_cleanly_and_makes_nothing(
    paths: Paths, monkeypatch: pytest.MonkeyPatch, loop: asyncio.AbstractEventLoop
) -> None:
    """What SIGTERM does (``Desktop.quit``) with the wizard open after the store was made:
    the wizard is cancelled, the store it made is removed, the app exits 0."""
    from tests.ui.conftest import wait_signal
    from ui.first_run import FirstRunWizard

    monkeypatch.setenv("MAMA_CACHE_DIR", str(paths.cache))
    desktop = Desktop(paths)
    made: list[bool] = []

    async def steps() -> None:
        (wizard,) = await wait_signal(desktop.dialog_opened, 30)
        assert isinstance(wizard, FirstRunWizard)
        wizard.key_page.passphrase.setText(PASSPHRASE)
        wizard.key_page.again.setText(PASSPHRASE)
        ready = asyncio.ensure_future(wait_signal(wizard.memory_ready, 120))
        wizard.next()
        await ready
        made.append(paths.db.exists())  # control: there was a store to remove
        desktop.quit()

    async def whole() -> int:
        wizard = asyncio.ensure_future(steps())
        code = await asyncio.wait_for(desktop.run(), 120)
        await wizard
        return code

    assert loop.run_until_complete(whole()) == 0
    assert made == [True]
    assert not paths.db.exists()
    assert desktop.memory is None
