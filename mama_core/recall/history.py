"""Predecessors of recall hits, for ``include_history``.

A judgment's predecessors are the rows it replaced: those whose
``superseded_by`` names it, and the targets of its ``supersedes`` edges, then
theirs, and so on. They are returned only on request, labelled ``replaced``,
and only where the caller could see them: the same scopes and kinds as the
query, status ``superseded`` (never a purged, proposed or rejected row: erased,
or never believed), whatever their validity time. The walk stops at a predecessor the caller may not
see, so a chain never leaks through a foreign row.
"""

from __future__ import annotations

from dataclasses import replace

from mama_core.recall.predicate import Predicate
from mama_core.recall.rows import Row, fetch_rows
from mama_core.store.connection import Connection

MAX_HISTORY_DEPTH = 32
# A predecessor is a row that was believed and then replaced: status superseded
# (never purged, proposed or rejected: erased, or never believed).
HISTORY_STATUSES = frozenset({"superseded"})


def history_predicate(predicate: Predicate) -> Predicate:
    """The predicate for predecessors: same scopes and kinds, status superseded."""
    return replace(predicate, statuses=HISTORY_STATUSES, valid_at=None)


def predecessors(
    conn: Connection, ids: list[int], predicate: Predicate
) -> dict[int, list[tuple[Row, int]]]:
    """For each id, its visible predecessors as ``(row, replaced_by)``, nearest first.

    A predecessor reachable from several hits is listed once, under the first.
    """
    visible = history_predicate(predicate)
    out: dict[int, list[tuple[Row, int]]] = {i: [] for i in ids}
    seen: set[int] = set(ids)
    # frontier: (judgment whose predecessors we look for, the hit it belongs to)
    frontier: dict[int, int] = {i: i for i in ids}
    for _ in range(MAX_HISTORY_DEPTH):
        if not frontier:
            break
        marks = ", ".join("?" * len(frontier))
        keys = list(frontier)
        pairs = conn.execute(
            f"SELECT id, superseded_by FROM judgments WHERE superseded_by IN ({marks}) "
            f"UNION SELECT dst_id, src_id FROM edges WHERE kind = 'supersedes' "
            f"AND src_id IN ({marks}) ORDER BY 1 DESC",
            [*keys, *keys],
        ).fetchall()
        found: dict[int, tuple[int, int]] = {}  # predecessor -> (hit, its successor)
        for raw_pred, raw_successor in pairs:
            pred_id, successor = int(raw_pred), int(raw_successor)
            if pred_id not in seen and pred_id not in found:
                found[pred_id] = (frontier[successor], successor)
        rows = fetch_rows(conn, list(found), visible)
        frontier = {}
        for pred_id, (hit_id, successor) in found.items():
            seen.add(pred_id)
            row = rows.get(pred_id)
            if row is not None:
                out[hit_id].append((row, successor))
                frontier[pred_id] = hit_id
    return out
