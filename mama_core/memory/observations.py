"""The one door that inserts ``observations``: raw inputs (messages, mails, cards) kept as
they arrived, one per ``(source, external_id)``.

Every caller says what an input already held does (``IfHeld``), because the three
that record them want different things: the ``observation.record`` verb refuses it,
the mailbox (and its journal) reuses the held one, a connector batch leaves it out.
"Held" includes a purged observation (its external id is then its keyed hash), so a
purged input that arrives again is never stored again. A purge erases an
observation's text in ``observation_erasure``, inside the purge's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from mama_core.errors import CommandConflictError
from mama_core.memory.observation_erasure import find_observation, held_external_ids
from mama_core.store.connection import Connection


class IfHeld(Enum):
    """What recording an observation that is already held does."""

    REFUSE = "refuse"
    """Raise ``CommandConflictError`` naming the held id (the ``observation.record`` verb)."""
    REUSE = "reuse"
    """Answer the held observation's id, unchanged: the first text received is the record
    (the mailbox: a message posted again is the same input)."""
    SKIP = "skip"
    """Leave it out (None), as a second copy in the same batch (a connector batch, whose
    held ids are asked once per source and 500 ids, not once per item)."""


@dataclass(frozen=True)
class NewObservation:
    """An input to keep as it arrived."""

    source: str
    external_id: str
    author: str
    text: str
    received_at: str


_INSERT = (
    "INSERT INTO observations (source, external_id, author, text, received_at) "
    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (source, external_id) DO NOTHING"
)


def record_observations(
    conn: Connection, new: Sequence[NewObservation], *, if_held: IfHeld
) -> list[int | None]:
    """Insert each of ``new`` not held yet, in order, on ``conn``'s open transaction; the
    id of each (None for one skipped under ``IfHeld.SKIP``)."""
    if if_held is IfHeld.SKIP:
        return _record_new(conn, new)
    return [_record_one(conn, observation, if_held) for observation in new]


def record_observation(conn: Connection, new: NewObservation, *, if_held: IfHeld) -> int:
    """``record_observations`` for one input that is refused or reused if held: its id."""
    if if_held is IfHeld.SKIP:
        raise ValueError("a single observation is refused or reused if held, not skipped")
    found = _record_one(conn, new, if_held)
    assert found is not None, "inserted, or held and reused"
    return found


def _record_one(conn: Connection, new: NewObservation, if_held: IfHeld) -> int:
    held = find_observation(conn, new.source, new.external_id)  # a purged one too
    if held is None:
        cursor = conn.execute(_INSERT, _values(new))
        if cursor.rowcount:
            return int(cursor.lastrowid or 0)
        held = find_observation(conn, new.source, new.external_id)  # another writer's
        assert held is not None, "inserted or already there"
    if if_held is IfHeld.REFUSE:
        raise CommandConflictError(
            f"Observation {new.source}/{new.external_id} is already recorded (id {held}).",
            details={"observation_id": held},
        )
    return held


def _record_new(conn: Connection, new: Sequence[NewObservation]) -> list[int | None]:
    held = {
        source: held_external_ids(conn, source, [n.external_id for n in new if n.source == source])
        for source in {n.source for n in new}
    }
    ids: list[int | None] = []
    for observation in new:
        if observation.external_id in held[observation.source]:
            ids.append(None)
            continue
        cursor = conn.execute(_INSERT, _values(observation))
        held[observation.source].add(observation.external_id)
        ids.append(int(cursor.lastrowid or 0) if cursor.rowcount else None)
    return ids


def _values(new: NewObservation) -> tuple[str, str, str, str, str]:
    return (new.source, new.external_id, new.author, new.text, new.received_at)
