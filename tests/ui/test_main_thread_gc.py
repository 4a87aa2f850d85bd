"""Cycles are collected on the Qt thread only while the app runs (ui.main_thread_gc).

A Qt object in a reference cycle dies where the collector runs; CPython runs it on
whichever thread crosses the allocation threshold. These tests use a plain object in a
cycle (its finalizer names the thread it died on) and a worker thread that allocates,
as the model-loading thread does."""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref

import pytest
from pytestqt.qtbot import QtBot

from ui.main_thread_gc import MainThreadCollector


class Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the cycle collector frees it


def drop_a_cycle() -> list[str]:
    """Make and drop a cycle; the returned list gets the name of the thread it dies on."""
    died_on: list[str] = []
    node = Node()
    weakref.finalize(node, lambda: died_on.append(threading.current_thread().name))
    del node
    return died_on


def allocate_on_a_worker_thread(kept: list[list[int]]) -> None:
    """Far more container allocations than gen 0's threshold, kept alive (a freed
    container lowers the count again)."""

    def work() -> None:
        kept.extend([i] for i in range(20 * gc.get_threshold()[0]))

    worker = threading.Thread(target=work, name="allocating-worker")
    worker.start()
    worker.join(30)
    assert not worker.is_alive()


def test_without_it_a_worker_thread_collects_the_cycle() -> None:
    """The hazard itself (the control for the test below)."""
    assert gc.isenabled()
    gc.collect()
    died_on = drop_a_cycle()
    kept: list[list[int]] = []
    allocate_on_a_worker_thread(kept)
    assert len(died_on) == 1 and died_on[0] != threading.main_thread().name, died_on


def test_with_it_the_cycle_dies_on_the_qt_thread(
    loop: asyncio.AbstractEventLoop, qtbot: QtBot
) -> None:
    # The loop fixture installs the collector, as ui.application.run does.
    assert not gc.isenabled()
    died_on = drop_a_cycle()
    kept: list[list[int]] = []
    allocate_on_a_worker_thread(kept)
    assert died_on == []  # the worker crossed the threshold and collected nothing
    qtbot.waitUntil(lambda: bool(died_on), timeout=10_000)
    assert died_on == [threading.main_thread().name]


def test_uninstall_collects_and_gives_collection_back(qtbot: QtBot) -> None:
    assert gc.isenabled()
    collector = MainThreadCollector.install()
    try:
        assert not gc.isenabled()
        died_on = drop_a_cycle()
    finally:
        collector.uninstall()
        collector.deleteLater()
    assert died_on == [threading.main_thread().name]
    assert gc.isenabled()


@pytest.mark.parametrize("allocated, collections", [(0, 0), (2_000, 1)])
def test_a_check_collects_only_past_the_threshold(
    allocated: int, collections: int, qtbot: QtBot
) -> None:
    collector = MainThreadCollector.install()
    try:
        gc.collect()
        kept = [[i] for i in range(allocated)]
        collector.check()
        assert collector.collections == collections
        del kept
    finally:
        collector.uninstall()
        collector.deleteLater()
