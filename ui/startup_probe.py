"""Start-up milestones for the benchmark: when the tray showed, when the memory opened…

With ``MAMA_STARTUP_PROBE=/some/file`` set, the desktop app appends one line
per milestone (``name wall-clock-seconds``) to that file; otherwise marking
costs nothing. ``bench/startup.py`` reads the file. No Qt here.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ENV_PROBE = "MAMA_STARTUP_PROBE"


class StartupProbe:
    """Appends milestones to a file, or does nothing."""

    def __init__(self, path: Path | None) -> None:
        self._path = path

    @classmethod
    def from_env(cls) -> StartupProbe:
        value = os.environ.get(ENV_PROBE)
        return cls(Path(value) if value else None)

    def mark(self, name: str, detail: str = "") -> None:
        if self._path is None:
            return
        line = f"{name} {time.time():.6f} {detail}".rstrip()
        with open(self._path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def mark_modules(self) -> None:
        """A ``modules`` line naming every top-level module loaded now (the memory
        benchmark reports which heavy ones the idle tray holds; the last line counts)."""
        if self._path is not None:
            self.mark("modules", " ".join(sorted({n.partition(".")[0] for n in sys.modules})))


def read_marks(path: Path) -> dict[str, float]:
    """The first time each milestone was reached."""
    marks: dict[str, float] = {}
    if not path.exists():
        return marks
    for line in path.read_text("utf-8").splitlines():
        name, _, rest = line.partition(" ")
        if name and rest:  # a ``modules`` line goes on after its time
            marks.setdefault(name, float(rest.split()[0]))
    return marks
