"""Start at login on Linux: an XDG autostart entry (``~/.config/autostart/mama.desktop``).

``XDG_CONFIG_HOME`` is respected, as the XDG autostart specification says.
No Qt here, so the logic is tested without a display.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

ENTRY_NAME = "mama.desktop"


def autostart_dir() -> Path:
    """``$XDG_CONFIG_HOME/autostart``, defaulting to ``~/.config/autostart``."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "autostart"


def entry_path() -> Path:
    return autostart_dir() / ENTRY_NAME


def launch_command() -> list[str]:
    """How to start the desktop app again: the ``mama`` script beside this Python,
    else on PATH, else this interpreter running ``ui.entry``."""
    beside = Path(sys.executable).with_name("mama")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("mama")
    if found:
        return [found]
    return [sys.executable, "-m", "ui.entry"]


def entry_text(command: list[str]) -> str:
    """The desktop entry that starts MAMA in the tray at login."""
    exec_line = " ".join(_desktop_quote(arg) for arg in command)
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        "Name=MAMA\n"
        "Comment=Your personal work agent, with a memory you can trust\n"
        f"Exec={exec_line}\n"
        "Icon=mama\n"
        "Terminal=false\n"
        "X-GNOME-Autostart-enabled=true\n"
    )


def is_enabled() -> bool:
    return entry_path().exists()


def set_enabled(enabled: bool, command: list[str] | None = None) -> Path:
    """Write (or remove) the autostart entry; returns its path."""
    path = entry_path()
    if not enabled:
        path.unlink(missing_ok=True)
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(entry_text(command or launch_command()), "utf-8")
    os.replace(tmp, path)
    return path


def _desktop_quote(arg: str) -> str:
    """Quote one Exec argument the way the desktop entry spec asks."""
    if arg and all(c.isalnum() or c in "-_./=:+@," for c in arg):
        return arg
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`").replace("$", "\\$")
    return f'"{escaped}"' if escaped else shlex.quote(arg)
