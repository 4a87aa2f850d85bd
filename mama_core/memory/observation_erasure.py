"""Erasing observations' text inside a purge's transaction.

The row stays (source, when it arrived, when it was purged) so the deliveries
and mailbox rows that point at it stay whole; its text and author (and a
connector item's metadata) are emptied, and its external id (a mail's is
``<folder>/<Message-ID>``, which names the mail) becomes ``erased:<keyed hash>``:
``find_observation`` still matches it, so a purged item that arrives again is
not stored again. The event keeps only a keyed hash (HMAC under the store
secret) of what was erased, never a bare one that short text
could be guessed back from.
``secure_delete`` zeroes the freed bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypedDict

from mama_core.errors import InvalidTransitionError, NotFoundError
from mama_core.memory.writer import Tx
from mama_core.store.connection import Connection
from mama_core.store.secret import KEYED_FUNCTION

ERASED_ID_PREFIX = "erased:"
_IDS_PER_QUERY = 500


def _erased_id_sql(source: str, external_id: str) -> str:
    """SQL for the external id a purge leaves: the keyed hash of source and external id."""
    return f"'{ERASED_ID_PREFIX}' || {KEYED_FUNCTION}('observation', {source}, {external_id})"


def find_observation(conn: Connection, source: str, external_id: str) -> int | None:
    """The id of the observation (``source``, ``external_id``), purged ones included
    (whose external id is kept only as its keyed hash); None if there is none."""
    row = conn.execute(
        "SELECT id FROM observations WHERE source = ? AND "
        f"(external_id = ? OR external_id = {_erased_id_sql('?', '?')})",
        (source, external_id, source, external_id),
    ).fetchone()
    return None if row is None else int(row[0])


def held_external_ids(conn: Connection, source: str, external_ids: Iterable[str]) -> set[str]:
    """Which of ``external_ids`` the store holds for ``source``, purged ones included:
    ``find_observation`` for a whole batch, one query per 500 ids. The keyed hash of
    each id (to match a purged row) is computed only when ``source`` has a purged
    observation at all."""
    wanted = list(dict.fromkeys(external_ids))
    purged = _has_purged(conn, source)
    held: set[str] = set()
    for start in range(0, len(wanted), _IDS_PER_QUERY):
        chunk = wanted[start : start + _IDS_PER_QUERY]
        marks = ", ".join("?" for _ in chunk)
        held.update(
            str(row[0])
            for row in conn.execute(
                "SELECT external_id FROM observations "
                f"WHERE source = ? AND external_id IN ({marks})",
                (source, *chunk),
            )
        )
        if purged:
            rows = ", ".join("(?)" for _ in chunk)
            held.update(
                str(row[0])
                for row in conn.execute(
                    f"WITH wanted (external_id) AS (VALUES {rows}) "
                    "SELECT w.external_id FROM wanted w JOIN observations o "
                    "ON o.source = ? AND o.external_id = "
                    f"{_erased_id_sql('?', 'w.external_id')}",
                    (*chunk, source, source),
                )
            )
    return held


def _has_purged(conn: Connection, source: str) -> bool:
    """Whether any observation of ``source`` has an erased external id (a range of the
    ``(source, external_id)`` index: no row of the source is read otherwise)."""
    row = conn.execute(
        "SELECT 1 FROM observations WHERE source = ? AND external_id >= ? "
        "AND external_id < ? LIMIT 1",
        (source, ERASED_ID_PREFIX, ERASED_ID_PREFIX[:-1] + chr(ord(ERASED_ID_PREFIX[-1]) + 1)),
    ).fetchone()
    return row is not None


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
        "UPDATE observations SET text = '', author = '', purged_at = ?, "
        f"external_id = {_erased_id_sql('source', 'external_id')} WHERE id = ?",
        (tx.at, observation_id),
    )
    # a connector item's metadata (a subject, a file name) is its text too
    tx.conn.execute(
        "UPDATE observation_facets SET metadata = '{}' WHERE observation_id = ?",
        (observation_id,),
    )
    return digest


class ErasedObservation(TypedDict):
    """One erased observation as a purge's event keeps it: its id and the keyed hash
    of what was erased."""

    id: int
    hmac: str


def erase_observations(tx: Tx, observation_ids: list[int]) -> list[ErasedObservation]:
    """Erase each observation (all or nothing with the transaction): ``[{id, hmac}]``."""
    return [{"id": oid, "hmac": erase_observation(tx, oid)} for oid in observation_ids]
