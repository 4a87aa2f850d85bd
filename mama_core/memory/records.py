"""Judgment rows as values: loading them under the caller's scopes, hashing
their content, and shaping them for callers.

``load_visible`` is how every mutation and read reaches a target by id: a row
outside the caller's scopes is reported exactly like a missing one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mama_core.memory.canonical import canonical_hash
from mama_core.memory.errors import NotFoundError
from mama_core.memory.scopes import scope_filter, scopes_of, visible_scopes
from mama_core.store.connection import Connection

if TYPE_CHECKING:
    from mama_core.memory.grants import Grant

JUDGMENT_COLUMNS = (
    "id, kind, topic, summary, details, applies_when, steps, confidence, status, "
    "superseded_by, outcome, valid_from, valid_until, recorded_at, provenance, involvement, "
    "command_id, content_hash"
)


@dataclass(frozen=True)
class Judgment:
    """One row of ``judgments``."""

    id: int
    kind: str
    topic: str
    summary: str
    details: str
    applies_when: str | None
    steps: list[str]
    confidence: float | None
    status: str
    superseded_by: int | None
    outcome: str | None
    valid_from: str
    valid_until: str | None
    recorded_at: str
    provenance: dict[str, Any]
    involvement: str
    command_id: str
    content_hash: str

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> Judgment:
        return cls(
            id=int(row[0]),
            kind=str(row[1]),
            topic=str(row[2]),
            summary=str(row[3]),
            details=str(row[4]),
            applies_when=row[5],
            steps=json.loads(row[6]) if row[6] else [],
            confidence=row[7],
            status=str(row[8]),
            superseded_by=row[9],
            outcome=row[10],
            valid_from=str(row[11]),
            valid_until=row[12],
            recorded_at=str(row[13]),
            provenance=json.loads(row[14]),
            involvement=str(row[15]),
            command_id=str(row[16]),
            content_hash=str(row[17]),
        )

    def content(self) -> dict[str, Any]:
        """The immutable fields, as hashed into ``content_hash``."""
        return content_fields(
            kind=self.kind,
            topic=self.topic,
            summary=self.summary,
            details=self.details,
            applies_when=self.applies_when,
            steps=self.steps,
            confidence=self.confidence,
            valid_from=self.valid_from,
            recorded_at=self.recorded_at,
            provenance=self.provenance,
            command_id=self.command_id,
        )

    def text_for_embedding(self) -> str:
        return embedding_text(self.topic, self.summary, self.details, self.applies_when)


def content_fields(
    *,
    kind: str,
    topic: str,
    summary: str,
    details: str,
    applies_when: str | None,
    steps: list[str],
    confidence: float | None,
    valid_from: str,
    recorded_at: str,
    provenance: dict[str, Any],
    command_id: str,
) -> dict[str, Any]:
    """The canonical content of a judgment: what its ``content_hash`` covers."""
    return {
        "kind": kind,
        "topic": topic,
        "summary": summary,
        "details": details,
        "applies_when": applies_when,
        "steps": list(steps),
        "confidence": confidence,
        "valid_from": valid_from,
        "recorded_at": recorded_at,
        "provenance": provenance,
        "command_id": command_id,
    }


def content_hash(content: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a judgment's content."""
    return canonical_hash(content)


def embedding_text(topic: str, summary: str, details: str, applies_when: str | None) -> str:
    """The text a judgment's vector is computed from."""
    return "\n".join(part for part in (topic, summary, details, applies_when or "") if part)


def load_visible(conn: Connection, judgment_id: int, grant: Grant) -> Judgment:
    """The judgment ``judgment_id`` if the grant sees it; else ``not_found``."""
    predicate, params = scope_filter("j", grant)
    row = conn.execute(
        f"SELECT {_prefixed('j')} FROM judgments j WHERE j.id = ? AND {predicate}",
        (judgment_id, *params),
    ).fetchone()
    if row is None:
        raise NotFoundError(
            f"No judgment {judgment_id} in your scopes.", details={"id": judgment_id}
        )
    return Judgment.from_row(row)


def _prefixed(alias: str) -> str:
    return ", ".join(f"{alias}.{c.strip()}" for c in JUDGMENT_COLUMNS.split(","))


def select_columns(alias: str) -> str:
    """The judgment columns qualified with ``alias``, in ``Judgment.from_row`` order."""
    return _prefixed(alias)


def summary_dict(j: Judgment, scopes: list[str], grant: Grant) -> dict[str, Any]:
    """A judgment as a search result or history entry."""
    return {
        "id": j.id,
        "kind": j.kind,
        "topic": j.topic,
        "summary": j.summary,
        "details": j.details,
        "applies_when": j.applies_when,
        "steps": j.steps,
        "confidence": j.confidence,
        "status": j.status,
        "scopes": visible_scopes(scopes, grant),
        "valid_from": j.valid_from,
        "valid_until": j.valid_until,
        "recorded_at": j.recorded_at,
        "involvement": j.involvement,
    }


def full_dict(conn: Connection, j: Judgment, grant: Grant) -> dict[str, Any]:
    """A judgment with everything a reader may see: provenance, outcome, successor."""
    out = summary_dict(j, scopes_of(conn, j.id), grant)
    out.update(
        {
            "superseded_by": j.superseded_by,
            "outcome": j.outcome,
            "provenance": j.provenance,
            "command_id": j.command_id,
            "content_hash": j.content_hash,
        }
    )
    return out
