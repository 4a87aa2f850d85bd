"""The chain anchor kept in the data folder, beside (not inside) the store file.

Every process that writes (the CLI, the tray, the daemon, ``mama mcp``) keeps
here the newest chain head it has seen, MAC'd with the store secret; ``mama
verify`` checks the store still has that event with that hash. It is a file of
its own, not ``settings.json``, so that processes writing it after each commit
never race with the owner saving settings. Writes are atomic (a temporary file
then a rename) and never move the anchor back to an older head.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from pathlib import Path

from mama_core.memory.anchor import ChainAnchor

log = logging.getLogger(__name__)


def anchor_path(db_path: Path) -> Path:
    """Where the anchor of the store at ``db_path`` is kept."""
    return db_path.with_name(db_path.name + ".anchor.json")


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
        if (
            kept is not None
            and kept.store_id == anchor.store_id
            and kept.event_id >= anchor.event_id
        ):
            return
        fd, tmp = tempfile.mkstemp(prefix=".anchor-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(anchor.to_json(), fh)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
