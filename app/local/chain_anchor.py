"""The chain anchor, kept in two copies outside the store file: beside it in the data
folder, and in the config folder (``anchors/<store id>-<place>.json``).

The second copy is why there are two: whoever holds the data folder (a synced or
copied folder, a restored backup) could delete the copy beside the store together
with a rewritten history; the config folder is not in it. The keyring, beside the
key, was the other candidate, but a store opened with ``MAMA_DB_KEY`` or a
passphrase has no keyring entry, and a file there is inspectable by the owner.

Every process that writes (the CLI, the tray, the daemon, ``mama mcp``) keeps
here the newest chain head it has seen, MAC'd with the store secret; ``mama
verify`` checks the store still has that event with that hash. It is a file of
its own, not ``settings.json``, so that processes writing it after each commit
never race with the owner saving settings. Writes are atomic (a temporary file
then a rename) and never move the anchor back to an older head.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

from mama_core.memory.anchor import ChainAnchor

log = logging.getLogger(__name__)

ANCHORS_DIR = "anchors"


def anchor_path(db_path: Path) -> Path:
    """Where the anchor of the store at ``db_path`` is kept beside it."""
    return db_path.with_name(db_path.name + ".anchor.json")


def external_anchor_path(config: Path, store_id: str, db_path: Path) -> Path:
    """Where the second copy of the anchor of store ``store_id`` at ``db_path`` is kept:
    named by the file's place too, so two copies of one store used side by side (a
    test copy with ``--home``) do not take each other's anchor for their own. A store
    moved elsewhere keeps the copy beside it and gets a second one with its next write."""
    return config / ANCHORS_DIR / f"{store_id}-{_place(db_path)}.json"


def held_data_marks(db_path: Path, config: Path) -> list[Path]:
    """The anchors a store at ``db_path`` that held data left: the one beside it, and
    the config folder's copies for that place (whatever the store's id, which an
    emptied file no longer tells). ``Store.open`` refuses a 0-byte file while one of
    them is there, instead of making a new store over what was truncated."""
    external = sorted((config / ANCHORS_DIR).glob(f"*-{_place(db_path)}.json"))
    return [anchor_path(db_path), *external]


def _place(db_path: Path) -> str:
    return hashlib.sha256(str(db_path.resolve()).encode("utf-8")).hexdigest()[:16]


class FileAnchorKeeper:
    """An ``AnchorKeeper`` backed by a small JSON file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def for_store(cls, db_path: Path) -> FileAnchorKeeper:
        return cls(anchor_path(db_path))

    def load(self) -> ChainAnchor | None:
        """The kept anchor; None if there is none (a store never written by this version)."""
        try:
            data = json.loads(self.path.read_text("utf-8"))
            return ChainAnchor.from_json(data)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("the chain anchor %s cannot be read: %s", self.path, exc)
            return ChainAnchor("", 0, "", "")

    def save(self, anchor: ChainAnchor) -> None:
        kept = self.load()
        if kept is not None and kept.covers(anchor):
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".anchor-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(anchor.to_json(), fh)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


class StoreAnchors:
    """An ``AnchorKeeper`` keeping both copies of one store's anchor."""

    def __init__(self, db_path: Path, config: Path, store_id: str) -> None:
        self.beside = FileAnchorKeeper.for_store(db_path)
        self.external = FileAnchorKeeper(external_anchor_path(config, store_id, db_path))

    def load(self) -> ChainAnchor | None:
        """A kept copy (the external one first); None when neither is there."""
        return self.external.load() or self.beside.load()

    def load_all(self) -> list[ChainAnchor]:
        """Every copy kept (each is checked: they may differ)."""
        return [a for a in (self.beside.load(), self.external.load()) if a is not None]

    def save(self, anchor: ChainAnchor) -> None:
        """Keep ``anchor`` in both places; a failure in one does not stop the other."""
        failed: OSError | None = None
        for keeper in (self.beside, self.external):
            try:
                keeper.save(anchor)
            except OSError as exc:
                failed = failed or exc
        if failed is not None:
            raise failed

    def remove(self) -> None:
        """Drop both copies (the owner accepting a store restored from a backup)."""
        for keeper in (self.beside, self.external):
            keeper.path.unlink(missing_ok=True)
