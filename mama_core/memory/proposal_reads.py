"""Reads of the judgments waiting for the owner, for the app's proposal feed (which
turns them into review cards): the feed walks ``judgments`` past its own cursor and
groups what one source-delta turn proposed, without SQL of its own on the table."""

from __future__ import annotations

from mama_core.store.connection import Connection


def recorded_after(conn: Connection, after_id: int) -> list[tuple[int, str, str]]:
    """Every judgment with an id above ``after_id``, oldest first: (id, status,
    provenance as stored, JSON)."""
    rows = conn.execute(
        "SELECT id, status, provenance FROM judgments WHERE id > ? ORDER BY id", (after_id,)
    ).fetchall()
    return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]


def newest_id(conn: Connection) -> int:
    """The id of the newest judgment (0 when there is none)."""
    return int(conn.execute("SELECT coalesce(max(id), 0) FROM judgments").fetchone()[0])


def proposed_up_to(conn: Connection, last_id: int) -> list[int]:
    """The proposed judgments with an id up to ``last_id``, oldest first."""
    return [
        int(row[0])
        for row in conn.execute(
            "SELECT id FROM judgments WHERE status = 'proposed' AND id <= ? ORDER BY id",
            (last_id,),
        )
    ]


def proposed_in_turn_of(conn: Connection, source_ref: str) -> list[tuple[int, str | None]]:
    """The proposals waiting that a source-delta turn saved citing ``source_ref``, oldest
    first: (id, the origin its provenance names, if any)."""
    rows = conn.execute(
        "SELECT j.id, json_extract(j.provenance, '$.origin') FROM judgments j "
        "WHERE j.status = 'proposed' AND json_extract(j.provenance, '$.turn') = 'source_delta' "
        "AND EXISTS (SELECT 1 FROM json_each(j.provenance, '$.source_refs') r "
        "WHERE r.value = ?) ORDER BY j.id",
        (source_ref,),
    ).fetchall()
    return [(int(r[0]), None if r[1] is None else str(r[1])) for r in rows]
