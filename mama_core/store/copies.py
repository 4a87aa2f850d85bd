"""The copies of the store that the core itself writes: its backups.

``Store.copy_aside`` copies the whole (encrypted) file into ``backups/`` before
a migration, the core's own (label ``v<N>``) or a series' above it (the app's:
``app-v<N>``). Each copy holds every text the store held then, so a purge must
delete them all: the name is made here and found here, by one pattern, whatever
series made it. ``app.admin.copies`` builds the registry of every other file MAMA
writes that can hold the owner's text on top of this one.
"""

from __future__ import annotations

from pathlib import Path

BACKUP_DIR_NAME = "backups"
BACKUP_SUFFIX = ".bak"


def backup_path(db_path: Path, label: str, stamp: str) -> Path:
    """Where the copy of ``db_path`` made before migration ``label`` at ``stamp`` goes."""
    return db_path.parent / BACKUP_DIR_NAME / f"{db_path.name}.{label}.{stamp}{BACKUP_SUFFIX}"


def store_backups(db_path: Path) -> list[Path]:
    """Every backup ``copy_aside`` made of this store, from every migration series."""
    folder = db_path.parent / BACKUP_DIR_NAME
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob(f"{db_path.name}.*{BACKUP_SUFFIX}") if p.is_file())
