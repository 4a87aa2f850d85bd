"""Judgment rows (``mama_core.model.Judgment``) loaded under the caller's scopes,
their content hashed, and shaped for callers.

``load_visible`` is how every mutation and read reaches a target by id: a row
outside the caller's scopes is reported exactly like a missing one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mama_core.canonical import canonical_hash
from mama_core.errors import NotFoundError
from mama_core.memory.provenance import origin_line
from mama_core.memory.results import JudgmentSummary
from mama_core.model import Judgment, JudgmentContent, select_columns
from mama_core.scopes.reach import scope_filter, visible_scopes
from mama_core.store.connection import Connection

if TYPE_CHECKING:
    from mama_core.scopes.grants import Grant


def content_hash(content: JudgmentContent) -> str:
    """sha256 of the canonical JSON of a judgment's content."""
    return canonical_hash(content)


def load_visible(conn: Connection, judgment_id: int, grant: Grant) -> Judgment:
    """The judgment ``judgment_id`` if the grant sees it; else ``not_found``."""
    predicate, params = scope_filter("j", grant)
    row = conn.execute(
        f"SELECT {select_columns('j')} FROM judgments j WHERE j.id = ? AND {predicate}",
        (judgment_id, *params),
    ).fetchone()
    if row is None:
        raise NotFoundError(
            f"No judgment {judgment_id} in your scopes.", details={"id": judgment_id}
        )
    return Judgment.from_row(row)


def summary_of(j: Judgment, scopes: list[str], grant: Grant) -> JudgmentSummary:
    """A judgment as a search result or history entry."""
    return JudgmentSummary(
        id=j.id,
        kind=j.kind,
        topic=j.topic,
        summary=j.summary,
        details=j.details,
        applies_when=j.applies_when,
        steps=j.steps,
        confidence=j.confidence,
        status=j.status,
        scopes=visible_scopes(scopes, grant),
        valid_from=j.valid_from,
        valid_until=j.valid_until,
        recorded_at=j.recorded_at,
        involvement=j.involvement,
        origin=origin_line(j.provenance, j.involvement, j.status),
    )


def predecessors(conn: Connection, judgment_id: int) -> list[int]:
    """Every judgment ``judgment_id`` replaced, directly or through its predecessors."""
    rows = conn.execute(
        "WITH RECURSIVE chain(id) AS (SELECT ? UNION "
        "SELECT j.id FROM judgments j JOIN chain c ON j.superseded_by = c.id) "
        "SELECT id FROM chain WHERE id != ? ORDER BY id",
        (judgment_id, judgment_id),
    ).fetchall()
    return [int(r[0]) for r in rows]
