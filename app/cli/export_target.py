"""Where ``mama export --out`` may write, checked before the store is opened.

A missing folder, a folder given as the file, or a folder MAMA cannot write is
one line with its own code, not a traceback from ``open``.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from app.cli.display import terminal_text
from mama_core.errors import DiskFullError, MamaError


class FolderMissingError(MamaError):
    """The folder the output file should go into does not exist."""

    code = "folder_missing"
    exit_code = 6


class OutputNotWritableError(MamaError):
    """The output file cannot be written (a folder in its place, no permission)."""

    code = "output_not_writable"
    exit_code = 7


def check_export_target(out: Path) -> None:
    """Refuse ``out`` if its folder is missing or it names a folder."""
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise FolderMissingError(
            f"The folder {terminal_text(folder)} does not exist; create it first "
            "or choose another --out."
        )
    if out.is_dir():
        raise OutputNotWritableError(
            f"{terminal_text(out)} is a folder; give a file name for --out."
        )


def export_error(out: Path, exc: OSError) -> MamaError:
    """The typed error for an ``OSError`` met while writing ``out``."""
    if exc.errno == errno.ENOSPC:
        return DiskFullError(
            f"The disk holding {terminal_text(out)} is full; free some space and try again."
        )
    if exc.errno == errno.ENOENT:
        return FolderMissingError(
            f"The folder {terminal_text(out.parent)} does not exist; create it first "
            "or choose another --out."
        )
    reason = os.strerror(exc.errno) if exc.errno else str(exc)
    return OutputNotWritableError(f"MAMA cannot write {terminal_text(out)} ({reason}).")
