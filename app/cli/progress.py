"""Progress bars on stderr for the long first-time steps (building the model)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn

Report = Callable[[int, int, str], None]


@contextmanager
def model_progress() -> Iterator[Report]:
    """A ``report(done, total, what)`` callback drawing a bar only when needed."""
    console = Console(stderr=True)
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        console=console,
        transient=True,
    )
    task: list[TaskID] = []

    def report(done: int, total: int, what: str) -> None:
        if not task:
            progress.start()
            task.append(progress.add_task(what, total=total))
        progress.update(task[0], completed=done, total=total, description=what)

    try:
        yield report
    finally:
        if task:
            progress.stop()
