"""The window never waits on SQLite or the model: while a search over 10,000 memories
runs, the Qt loop keeps ticking. A positive control blocks the loop with the same
search run in place, and the same ticker sees the stall."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.startup import BENCH_KEY, cached_store, copy_store
from mama_core.embeddings import GgufEmbedder
from mama_core.memory import Engine, EngineConfig, Grant, SessionFacts
from mama_core.store import DbKey, Store
from tests.ui.conftest import wait_signal
from ui.bridge import EngineBridge
from ui.qt import QtCore
from ui.review.window import TAB_ALL, TAB_GUIDANCE, TAB_PROPOSED, ReviewWindow

MEMORIES = 10_000
QUERY = "when does the release train ship after the smoke tests"


@pytest.fixture(scope="session")
def store_10k(embedder: GgufEmbedder, model_cache_dir: Path) -> Path:
    """10,000 memories saved through the engine (built once per schema version, cached)."""
    return cached_store(MEMORIES, embedder, model_cache_dir)


class Ticker:
    """A 5 ms Qt timer noting when it fires; ``max_gap`` is the longest wait between ticks."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.timer = QtCore.QTimer(interval=5)
        self.timer.timeout.connect(lambda: self.times.append(time.perf_counter()))

    def start(self) -> None:
        self.times = [time.perf_counter()]
        self.timer.start()

    def stop(self) -> float:
        self.timer.stop()
        self.times.append(time.perf_counter())
        return max(b - a for a, b in zip(self.times, self.times[1:], strict=False))


@pytest.fixture
def big_window(
    store_10k: Path, tmp_path: Path, embedder: GgufEmbedder, loop: asyncio.AbstractEventLoop
) -> Iterator[tuple[ReviewWindow, Engine]]:
    home = tmp_path / "home"
    copy_store(store_10k, home)
    with (
        Store.open(home / "mama.db", DbKey.from_secret(BENCH_KEY)) as store,
        Engine(store, embedder, EngineConfig()) as engine,
    ):
        bridge = EngineBridge(engine)
        window = ReviewWindow(bridge)
        window.show()
        try:
            yield window, engine
        finally:
            loop.run_until_complete(window.aclose())
            window.close()
            window.deleteLater()
            bridge.close()


def test_loop_keeps_ticking_while_searching_10k(
    big_window: tuple[ReviewWindow, Engine], loop: asyncio.AbstractEventLoop
) -> None:
    window, engine = big_window
    ticker = Ticker()
    owner = (SessionFacts.owner_ui(), Grant.owner())
    payload = {"query": QUERY, "statuses": ["active", "proposed"], "limit": 200}

    async def scenario() -> dict[str, float]:
        began = time.perf_counter()
        await window.load()
        loaded = time.perf_counter() - began
        assert window.lists[TAB_PROPOSED].model.rowCount() > 100
        assert window.lists[TAB_GUIDANCE].model.rowCount() == 200  # capped, and says so

        # Control: the same search run on the loop's own thread stalls the ticker.
        ticker.start()
        blocked_until = time.perf_counter() + 0.6
        while time.perf_counter() < blocked_until:
            engine.dispatch("memory.search", payload, *owner)
        await asyncio.sleep(0)
        control_gap = ticker.stop()

        # The window's search runs off the loop: the ticker keeps going.
        window.show_tab(TAB_ALL)
        ticker.start()
        searches = 0
        search_began = time.perf_counter()
        while time.perf_counter() - search_began < 0.3 or searches < 3:
            window.search_bar.search.setText(f"{QUERY} {searches}")
            searched = asyncio.ensure_future(wait_signal(window.searched, 30))
            window.search_now()
            await searched
            searches += 1
        searching = time.perf_counter() - search_began
        gap = ticker.stop()
        assert window.lists[TAB_ALL].model.rowCount() > 0
        return {
            "loaded": loaded,
            "control_gap": control_gap,
            "gap": gap,
            "searching": searching,
            "ticks": len(ticker.times),
        }

    try:
        figures = loop.run_until_complete(scenario())
    finally:
        loop.run_until_complete(window.aclose())
    print(f"\n10k responsiveness: {figures}")
    # Relative to the control measured in this run (an absolute bound failed under
    # load): searching off the loop stalls it for a small part of what on it does.
    assert figures["control_gap"] >= 0.6
    assert figures["gap"] < figures["control_gap"] / 3, figures
    assert figures["ticks"] > figures["searching"] / 0.05
