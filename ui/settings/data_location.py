"""Where the owner asked the data folder to be, remembered outside the data folder.

The settings file lives *in* the data folder, so a new location cannot be
kept there. Settings writes the chosen folder to a one-line file in the
platform's config folder; ``mama`` (desktop and CLI alike, through
``ui.entry``) reads it at start and uses it as ``MAMA_HOME`` unless that is
already set. So a change takes effect on the next start. No Qt here.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from app.local.paths import APP_NAME

POINTER_FILE_NAME = "data-folder"


def pointer_path() -> Path:
    """The file naming the chosen data folder (``~/.config/mama/data-folder`` on Linux)."""
    return Path(platformdirs.user_config_dir(APP_NAME)) / POINTER_FILE_NAME


def chosen_home() -> Path | None:
    """The data folder chosen in Settings, or None when the default applies."""
    try:
        text = pointer_path().read_text("utf-8").strip()
    except OSError:
        return None
    return Path(text).expanduser() if text else None


def set_chosen_home(folder: Path | None) -> None:
    """Remember ``folder`` for the next start; None goes back to the default."""
    path = pointer_path()
    if folder is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(str(Path(folder).expanduser().absolute()) + "\n", "utf-8")
    os.replace(tmp, path)


def apply_chosen_home() -> None:
    """Use the chosen folder as ``MAMA_HOME`` for this process, unless that is set."""
    if os.environ.get("MAMA_HOME"):
        return
    folder = chosen_home()
    if folder is not None:
        os.environ["MAMA_HOME"] = str(folder)
