"""Where MAMA keeps its data and its cache.

The data folder holds the encrypted store (``mama.db``), its backups, the
settings and the log; it comes from platformdirs unless ``MAMA_HOME`` (or the
``--home`` option) names another. The cache holds the built GGUF model and
can always be deleted; ``MAMA_CACHE_DIR`` moves it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from mama_core.store import STORE_FILE_NAME

APP_NAME = "mama"


@dataclass(frozen=True)
class Paths:
    home: Path
    cache: Path

    @property
    def db(self) -> Path:
        return self.home / STORE_FILE_NAME

    @property
    def settings(self) -> Path:
        return self.home / "settings.json"

    @property
    def log(self) -> Path:
        return self.home / "logs" / "mama.log"


def resolve_paths(home: str | os.PathLike[str] | None = None) -> Paths:
    """The data and cache folders: ``home`` argument, then env, then platform default."""
    chosen = home or os.environ.get("MAMA_HOME") or platformdirs.user_data_dir(APP_NAME)
    cache = os.environ.get("MAMA_CACHE_DIR") or platformdirs.user_cache_dir(APP_NAME)
    return Paths(home=Path(chosen).expanduser().absolute(), cache=Path(cache).expanduser())
