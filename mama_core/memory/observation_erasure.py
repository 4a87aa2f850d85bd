"""Erasing observations' text inside a purge's transaction.

The row stays (source, external id, when it arrived, when it was purged) so the
deliveries and mailbox rows that point at it stay whole; its text and author
(and a connector item's metadata) are emptied and the event keeps only a keyed
hash (HMAC under the store secret) of them, never a bare one that short text
could be guessed back from.
``secure_delete`` zeroes the freed bytes.
"""

from __future__ import annotations

from typing import Any

from mama_core.memory.errors import InvalidTransitionError, NotFoundError
from mama_core.memory.writer import Tx


def observation_digest(tx: Tx, author: str, text: str) -> str:
    """The keyed hash an event keeps of an erased observation."""
    return tx.keyed_hash({"author": author, "text": text})


def erase_observation(tx: Tx, observation_id: int) -> str:
    """Erase one observation's text and author; return the digest of what was erased."""
    row = tx.conn.execute(
        "SELECT author, text, purged_at FROM observations WHERE id = ?", (observation_id,)
    ).fetchone()
    if row is None:
        raise NotFoundError(
            f"No observation {observation_id}.", details={"observation_id": observation_id}
        )
    if row[2] is not None:
        raise InvalidTransitionError(
            f"Observation {observation_id} was already purged.",
            details={"observation_id": observation_id},
        )
    digest = observation_digest(tx, str(row[0]), str(row[1]))
    tx.conn.execute(
        "UPDATE observations SET text = '', author = '', purged_at = ? WHERE id = ?",
        (tx.at, observation_id),
    )
    # a connector item's metadata (a subject, a file name) is its text too
    tx.conn.execute(
        "UPDATE observation_facets SET metadata = '{}' WHERE observation_id = ?",
        (observation_id,),
    )
    return digest


def erase_observations(tx: Tx, observation_ids: list[int]) -> list[dict[str, Any]]:
    """Erase each observation (all or nothing with the transaction): ``[{id, hmac}]``."""
    return [{"id": oid, "hmac": erase_observation(tx, oid)} for oid in observation_ids]
