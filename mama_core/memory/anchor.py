"""The chain head anchored outside the data file.

Rewriting the whole chain consistently, or cutting off its last events, leaves
a chain that checks out on its own. So the processes that write keep, outside
the file, "the chain had at least event N with hash H", with a keyed MAC so the
anchor itself cannot be edited to match. ``verify`` checks that event N still
has hash H. An anchor left behind by a process while another wrote later is
still true (N is just not the newest), so it is never a false alarm.

mama_core does not know where the anchor lives: an ``AnchorKeeper`` (the app's
file, the keyring) loads and saves it.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Any, Protocol

from mama_core.memory.events import ChainHead
from mama_core.store.connection import Connection
from mama_core.store.secret import StoreSecret


@dataclass(frozen=True)
class ChainAnchor:
    """A head the chain once had, MAC'd with the store secret."""

    store_id: str
    event_id: int
    hash: str
    mac: str

    def to_json(self) -> dict[str, Any]:
        return {
            "store_id": self.store_id,
            "event_id": self.event_id,
            "hash": self.hash,
            "mac": self.mac,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ChainAnchor:
        return cls(
            str(data["store_id"]), int(data["event_id"]), str(data["hash"]), str(data["mac"])
        )


class AnchorKeeper(Protocol):
    """Where a process keeps the anchor (outside the data file)."""

    def load(self) -> ChainAnchor | None: ...

    def save(self, anchor: ChainAnchor) -> None:
        """Keep ``anchor`` unless a later one (a higher event id) is already kept."""
        ...


def _mac(secret: StoreSecret, store_id: str, event_id: int, digest: str) -> str:
    return secret.hash(["chain-anchor", store_id, event_id, digest])


def store_id_of(conn: Connection) -> str:
    row = conn.execute("SELECT value FROM meta WHERE key = 'store_id'").fetchone()
    return "" if row is None else str(row[0])


def anchor_for(secret: StoreSecret, store_id: str, head: ChainHead) -> ChainAnchor:
    """The anchor of ``head``."""
    return ChainAnchor(store_id, head.id, head.hash, _mac(secret, store_id, head.id, head.hash))


def anchor_problems(conn: Connection, secret: StoreSecret, anchor: ChainAnchor) -> list[str]:
    """What is wrong between the store and an anchor kept outside it (empty if nothing)."""
    store_id = store_id_of(conn)
    if anchor.store_id != store_id:
        return [
            f"the chain anchor kept outside the file belongs to another store "
            f"({anchor.store_id}, this one is {store_id})"
        ]
    expected = _mac(secret, anchor.store_id, anchor.event_id, anchor.hash)
    if not hmac.compare_digest(expected, anchor.mac):
        return ["the chain anchor kept outside the file does not carry this store's MAC"]
    if anchor.event_id == 0:
        return []
    row = conn.execute("SELECT hash FROM events WHERE id = ?", (anchor.event_id,)).fetchone()
    if row is None:
        return [
            f"event {anchor.event_id} is gone: the chain once reached it (its last events "
            "were cut off, or an older copy of the store was put back; if you restored one "
            "yourself, remove the anchor file kept beside the store)"
        ]
    if str(row[0]) != anchor.hash:
        return [f"event {anchor.event_id} is not the one the chain once had (history rewritten)"]
    return []


__all__ = ["AnchorKeeper", "ChainAnchor", "anchor_for", "anchor_problems", "store_id_of"]
