"""Status changes shared by several actions: superseding a predecessor (which verb
applies to which status is ``verbs``' table; who may change it, ``ownership``'s rule)."""

from __future__ import annotations

from mama_core.memory.writer import Tx
from mama_core.model import Judgment

FROM_SAVE = "e.event_id = (SELECT min(ev.id) FROM events ev WHERE ev.judgment_id = e.src_id)"
"""SQL: edge ``e`` was written by the save of its source (its ``replaces``), not by a
later memory.link; only those edges replace anything."""


def supersede(tx: Tx, predecessor: Judgment, successor_id: int, successor_valid_from: str) -> None:
    """Mark ``predecessor`` superseded by ``successor_id`` and close its world validity
    at the successor's ``valid_from`` (never before its own start)."""
    closes = max(predecessor.valid_from, successor_valid_from)
    if predecessor.valid_until is not None and predecessor.valid_until < closes:
        closes = predecessor.valid_until
    tx.change_status(
        predecessor.id,
        predecessor.status,
        "superseded",
        superseded_by=successor_id,
        valid_until=closes,
    )
