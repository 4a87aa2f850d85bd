"""Coroutines started from Qt slots, kept alive and watched.

A button's ``clicked`` handler cannot ``await``; it hands a coroutine to a
``TaskGroup``, which holds a reference (so the task is not garbage-collected
mid-flight), reports an exception to one callback (the window's message line,
the tray) instead of letting it vanish, and cancels what is left on close.
``await_dialog`` shows a dialog without a nested event loop (no ``exec()``),
so the asyncio loop keeps running while the owner types.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from ui.qt import QtWidgets

log = logging.getLogger(__name__)

T = TypeVar("T")
ErrorSink = Callable[[BaseException], None]


class TaskGroup:
    """Tasks started on behalf of one window or controller."""

    def __init__(self, on_error: ErrorSink) -> None:
        self._on_error = on_error
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run ``coro`` on the current (qasync) loop; failures go to ``on_error``."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            self._on_error(exc)

    @property
    def busy(self) -> bool:
        return bool(self._tasks)

    async def aclose(self) -> None:
        """Cancel every task still running and wait for them to end."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


async def await_dialog(dialog: QtWidgets.QDialog) -> int:
    """Show ``dialog`` window-modal and wait for its result without ``exec()``."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[int] = loop.create_future()

    def finished(result: int) -> None:
        if not done.done():
            done.set_result(int(result))

    dialog.finished.connect(finished)
    dialog.open()
    try:
        return await done
    finally:
        # The dialog may already be gone (its parent closed while we waited).
        with contextlib.suppress(RuntimeError):
            dialog.finished.disconnect(finished)
            if dialog.isVisible():
                dialog.reject()
