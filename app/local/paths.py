"""Where MAMA keeps its data and its cache.

The data folder holds the encrypted store (``mama.db``), its backups, the
settings and the log; it comes from platformdirs unless ``MAMA_HOME`` (or the
``--home`` option) names another. The cache holds the built GGUF model and
can always be deleted; ``MAMA_CACHE_DIR`` moves it. The config folder (platformdirs',
or ``MAMA_CONFIG_DIR``) keeps what must live outside the data folder: the second copy
of each store's chain anchor, so whoever holds the data folder cannot remove both.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

from mama_core.store import STORE_FILE_NAME

APP_NAME = "mama"


def default_config() -> Path:
    """The config folder: ``MAMA_CONFIG_DIR``, else the platform's (not the data folder)."""
    chosen = os.environ.get("MAMA_CONFIG_DIR") or platformdirs.user_config_dir(APP_NAME)
    return Path(chosen).expanduser().absolute()


@dataclass(frozen=True)
class Paths:
    home: Path
    cache: Path
    config: Path = field(default_factory=default_config)

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
    return Paths(
        home=Path(chosen).expanduser().absolute(),
        cache=Path(cache).expanduser(),
        config=default_config(),
    )
