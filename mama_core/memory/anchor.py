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
from typing import Protocol

from mama_core.json_types import JsonObject
from mama_core.memory.events import ChainHead
from mama_core.store.connection import Connection
from mama_core.store.secret import StoreSecret


@dataclass(frozen=True)
class ChainAnchor:
    """A head the chain once had, and how many observations the store then counted
    (None in an anchor from before the count), MAC'd with the store secret."""

    store_id: str
    event_id: int
    hash: str
    mac: str
    observations: int | None = None

    def to_json(self) -> JsonObject:
        data: JsonObject = {
            "store_id": self.store_id,
            "event_id": self.event_id,
            "hash": self.hash,
            "mac": self.mac,
        }
        if self.observations is not None:
            data["observations"] = self.observations
        return data

    @classmethod
    def from_json(cls, data: JsonObject) -> ChainAnchor:
        observations = data.get("observations")
        return cls(
            str(data["store_id"]),
            int(data["event_id"]),
            str(data["hash"]),
            str(data["mac"]),
            None if observations is None else int(observations),
        )

    def covers(self, other: ChainAnchor) -> bool:
        """Whether this anchor says at least what ``other`` says (same store, no older
        head, no fewer observations): keeping it instead loses nothing."""
        return (
            self.store_id == other.store_id
            and self.event_id >= other.event_id
            and (self.observations or 0) >= (other.observations or 0)
        )


class AnchorKeeper(Protocol):
    """Where a process keeps the anchor (outside the data file)."""

    def load(self) -> ChainAnchor | None: ...

    def save(self, anchor: ChainAnchor) -> None:
        """Keep ``anchor`` unless a later one (a higher event id) is already kept."""
        ...


def _mac(
    secret: StoreSecret, store_id: str, event_id: int, digest: str, observations: int | None
) -> str:
    if observations is None:  # an anchor from before the observation count
        return secret.hash(["chain-anchor", store_id, event_id, digest])
    return secret.hash(["chain-anchor", store_id, event_id, digest, observations])


def store_id_of(conn: Connection) -> str:
    row = conn.execute("SELECT value FROM meta WHERE key = 'store_id'").fetchone()
    return "" if row is None else str(row[0])


def anchor_for(
    secret: StoreSecret, store_id: str, head: ChainHead, observations: int | None = None
) -> ChainAnchor:
    """The anchor of ``head`` (and of the store's observation count)."""
    mac = _mac(secret, store_id, head.id, head.hash, observations)
    return ChainAnchor(store_id, head.id, head.hash, mac, observations)


def observation_count(conn: Connection) -> int:
    """How many observations the store has ever counted (its sealed tally)."""
    row = conn.execute("SELECT observations FROM store_tally WHERE id = 1").fetchone()
    return 0 if row is None else int(row[0])


def is_anchored(conn: Connection) -> bool:
    """Whether the store has had a chain anchor kept outside it (it then needs one)."""
    row = conn.execute("SELECT anchored FROM store_tally WHERE id = 1").fetchone()
    return row is not None and int(row[0]) == 1


def mark_anchored(conn: Connection) -> None:
    """Record in the store, once, that its chain is anchored outside it: after the
    anchor was kept, so a crash between the two never asks for an anchor not kept."""
    if not is_anchored(conn):
        conn.execute("UPDATE store_tally SET anchored = 1 WHERE id = 1")


def anchor_problems(conn: Connection, secret: StoreSecret, anchor: ChainAnchor) -> list[str]:
    """What is wrong between the store and an anchor kept outside it (empty if nothing)."""
    store_id = store_id_of(conn)
    if anchor.store_id != store_id:
        return [
            f"the chain anchor kept outside the file belongs to another store "
            f"({anchor.store_id}, this one is {store_id})"
        ]
    expected = _mac(secret, anchor.store_id, anchor.event_id, anchor.hash, anchor.observations)
    if not hmac.compare_digest(expected, anchor.mac):
        return ["the chain anchor kept outside the file does not carry this store's MAC"]
    problems: list[str] = []
    counted = observation_count(conn)
    if anchor.observations is not None and counted < anchor.observations:
        problems.append(
            f"observations were deleted: the store once counted {anchor.observations}, "
            f"it now counts {counted} (an older copy of the store was put back, or its "
            f"tally rewound; {RESTORED_HINT})"
        )
    if anchor.event_id == 0:
        return problems
    row = conn.execute("SELECT hash FROM events WHERE id = ?", (anchor.event_id,)).fetchone()
    if row is None:
        problems.append(
            f"event {anchor.event_id} is gone: the chain once reached it (its last events "
            f"were cut off, or an older copy of the store was put back; {RESTORED_HINT})"
        )
    elif str(row[0]) != anchor.hash:
        problems.append(
            f"event {anchor.event_id} is not the one the chain once had (history rewritten)"
        )
    return problems


def missing_anchor_problems(conn: Connection, anchors: int) -> list[str]:
    """A store that has had an anchor and is given none: removing the anchor must not
    be a way to hide a rewritten history."""
    if anchors or not is_anchored(conn):
        return []
    return [
        "the chain anchor kept outside the file is gone, though this store has had one: "
        "a rewritten history cannot be ruled out (if you removed it after restoring a "
        "backup yourself, run 'mama verify --reanchor')"
    ]


RESTORED_HINT = "if you restored one yourself, run 'mama verify --reanchor' to accept it"


__all__ = [
    "AnchorKeeper",
    "ChainAnchor",
    "anchor_for",
    "anchor_problems",
    "is_anchored",
    "mark_anchored",
    "missing_anchor_problems",
    "observation_count",
    "store_id_of",
]
