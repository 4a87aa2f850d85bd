"""Reading the judgments recall returns, re-checked against the predicate.

The final fetch applies the read predicate in SQL once more, so a row whose
status or scope changed after the vector cache last heard of it is dropped
rather than returned.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from mama_core.recall.predicate import Predicate
from mama_core.recall.query import Row
from mama_core.scopes.bindings import scope_names_column
from mama_core.store.connection import Connection

_COLUMNS = (
    "j.id, j.kind, j.topic, j.summary, j.details, j.applies_when, j.steps, j.status, "
    "j.valid_from, j.valid_until, j.recorded_at, j.superseded_by, j.involvement, "
    + scope_names_column("j")
)


def _steps(raw: Any) -> tuple[str, ...]:
    if not raw:
        return ()
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return ()
    return tuple(str(s) for s in value) if isinstance(value, list) else ()  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]


def fetch_rows(conn: Connection, ids: Sequence[int], predicate: Predicate) -> dict[int, Row]:
    """The rows among ``ids`` that pass ``predicate``, keyed by id."""
    if not ids or predicate.selects_nothing:
        return {}
    where, params = predicate.sql("j", by_id=True)
    out: dict[int, Row] = {}
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM judgments AS j "
            f"WHERE j.id IN ({', '.join('?' * len(chunk))}) AND {where}",
            [*chunk, *params],
        ).fetchall()
        for r in rows:
            out[int(r[0])] = Row(
                id=int(r[0]),
                kind=r[1],
                topic=r[2],
                summary=r[3],
                details=r[4],
                applies_when=r[5],
                steps=_steps(r[6]),
                status=r[7],
                valid_from=r[8],
                valid_until=r[9],
                recorded_at=r[10],
                superseded_by=None if r[11] is None else int(r[11]),
                involvement=r[12],
                scopes=tuple(sorted((r[13] or "").split("\x1f"))) if r[13] else (),
            )
    return out
