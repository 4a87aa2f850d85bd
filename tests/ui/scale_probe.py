"""Run in its own process (``python -m tests.ui.scale_probe DIR MODEL_CACHE``) under a real X
display with ``QT_SCALE_FACTOR`` set: opens the review window over a store with a few
proposals in DIR and prints, as one JSON line, whether it fits the screen and whether
every action button lies whole inside it. A screenshot goes to DIR/review.png."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from mama_core.embeddings import load_embedder
from mama_core.memory import Engine, EngineConfig
from mama_core.store import DbKey, Store
from tests.conftest import TEST_KEY_HEX
from tests.ui.conftest import agent_propose
from ui.bridge import EngineBridge
from ui.qt import QEventLoop, QtCore, QtWidgets
from ui.review.window import ReviewWindow


def main(folder: Path, cache: Path) -> None:
    app = QtWidgets.QApplication([])
    loop = QEventLoop(app)
    asyncio.set_event_loop(loop)
    embedder = load_embedder(None, cache)
    with (
        Store.open(folder / "mama.db", DbKey.from_secret(TEST_KEY_HEX)) as store,
        Engine(store, embedder, EngineConfig()) as engine,
    ):
        for n in range(3):
            agent_propose(engine, f"Answer in short paragraphs, number {n}")
        bridge = EngineBridge(engine)
        window = ReviewWindow(bridge)
        window.show()
        loop.run_until_complete(window.load())
        area = window.screen().availableGeometry()
        inside = window.rect()
        buttons = {
            name: inside.contains(
                QtCore.QRect(button.mapTo(window, QtCore.QPoint()), button.size())
            )
            and button.width() >= button.minimumSizeHint().width()
            for name, button in window.buttons.items()
        }
        report = {
            "area": [area.width(), area.height()],
            "frame": [window.frameGeometry().width(), window.frameGeometry().height()],
            "fits": area.contains(window.frameGeometry()),
            "buttons": buttons,
        }
        window.grab().save(str(folder / "review.png"), "PNG")
        loop.run_until_complete(window.aclose())
        window.close()
        bridge.close()
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()  # stops the loop's worker threads before Qt goes
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
