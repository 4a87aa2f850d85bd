"""Switching the embedding model: load the new one, re-embed every memory, swap engines.

Vectors of different models are never compared, so a new model needs a vector
for every judgment. The engine is closed first (its queued writes finish),
``mama_core.recall.reembed`` fills the new vectors on a worker thread while a
progress dialog counts them, and a new engine over the same store takes over
the bridge. Re-embedding is resumable: cancelling keeps what was done, and
the old model stays in use.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from ui.qt import Qt, QtCore, QtWidgets, Signal

if TYPE_CHECKING:
    from mama_core.embeddings import GgufEmbedder
    from ui.bridge import EngineBridge
    from ui.memory_session import OpenMemory

log = logging.getLogger(__name__)


class ReembedCancelled(Exception):
    """The owner pressed Cancel; what was embedded so far stays."""


class _ProgressRelay(QtCore.QObject):
    """Carries progress from the worker thread to the dialog (queued signal)."""

    advanced = Signal(int, int, str)


class ReembedDialog(QtWidgets.QProgressDialog):
    """Counts judgments re-embedded; Cancel stops after the current batch."""

    def __init__(self, parent: QtWidgets.QWidget | None) -> None:
        super().__init__("Loading the new model…", "Cancel", 0, 0, parent)
        self.setObjectName("reembed_dialog")
        self.setWindowTitle("Re-embedding memories")
        self.setWindowModality(Qt.WindowModality.ApplicationModal)
        self.setMinimumDuration(0)
        self.setAutoClose(False)
        self.setAutoReset(False)

    def advance(self, done: int, total: int, what: str) -> None:
        self.setMaximum(max(total, 1))
        self.setValue(min(done, max(total, 1)))
        self.setLabelText(f"Re-embedding memories: {done} of {total}\n{what}")


async def change_model(
    memory: OpenMemory,
    bridge: EngineBridge,
    model_path: Path | None,
    parent: QtWidgets.QWidget | None = None,
    *,
    builtin: str | None = None,
) -> bool:
    """Re-embed with the model at ``model_path`` (None: the built-in model ``builtin``)
    and switch to it.

    Returns False if the owner cancelled (the old model stays); raises a
    ``MamaError`` if the model cannot be loaded.
    """
    from mama_core.embeddings import load_embedder
    from mama_core.memory import Engine, EngineConfig
    from mama_core.recall.reembed import reembed

    dialog = ReembedDialog(parent)
    relay = _ProgressRelay()
    relay.advanced.connect(dialog.advance, Qt.ConnectionType.QueuedConnection)
    cancelled = threading.Event()
    dialog.canceled.connect(cancelled.set)
    dialog.show()

    def progress(done: int, total: int, what: str) -> None:
        relay.advanced.emit(done, total, what)
        if cancelled.is_set():
            raise ReembedCancelled

    try:
        embedder: GgufEmbedder = await asyncio.to_thread(
            functools.partial(
                load_embedder, model_path, memory.paths.cache, progress, builtin=builtin
            )
        )
        await asyncio.to_thread(memory.engine.close)
        try:
            result = await asyncio.to_thread(reembed, memory.store, embedder, progress)
        except ReembedCancelled:
            log.info("re-embedding cancelled; staying with %s", memory.embedder.model_id)
            _restart_engine(memory, bridge, memory.embedder, Engine, EngineConfig)
            return False
        except BaseException:
            _restart_engine(memory, bridge, memory.embedder, Engine, EngineConfig)
            raise
        log.info("re-embedded %d judgments with %s", result.embedded, result.model_id)
        _restart_engine(memory, bridge, embedder, Engine, EngineConfig)
        return True
    except ReembedCancelled:
        return False
    finally:
        dialog.close()
        dialog.deleteLater()
        relay.deleteLater()


def _restart_engine(
    memory: OpenMemory,
    bridge: EngineBridge,
    embedder: GgufEmbedder,
    engine_type: type,
    config_type: type,
) -> None:
    config = config_type(tombstone_threshold=memory.settings.tombstone_threshold)
    old, memory.embedder = memory.embedder, embedder
    if old is not embedder:
        old.close()  # freed now, not by the garbage collector on some later thread
    memory.engine = engine_type(memory.store, embedder, config)
    bridge.replace_engine(memory.engine)
