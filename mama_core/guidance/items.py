"""Guidance records as the agent sees them: loading and one-block rendering.

Guidance is the judgments that steer the agent (constraints, preferences,
workflows, lessons). Loading goes through the recall read predicate, so the
scope filter is the same one every other read uses.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from mama_core.model import GUIDANCE_KINDS, Kind
from mama_core.recall.predicate import Predicate
from mama_core.store.connection import Connection

# The order kinds are shown in: what must not be done comes first.
KIND_ORDER: tuple[str, ...] = (
    Kind.CONSTRAINT.value,
    Kind.PREFERENCE.value,
    Kind.WORKFLOW.value,
    Kind.LESSON.value,
)
assert set(KIND_ORDER) == set(GUIDANCE_KINDS)

MAX_SUMMARY_CHARS = 500
MAX_STEP_CHARS = 200
MAX_STEPS_SHOWN = 20


@dataclass(frozen=True)
class GuidanceItem:
    """One guidance record: what it says and when it applies."""

    id: int
    kind: str
    topic: str
    summary: str
    applies_when: str
    steps: tuple[str, ...]
    status: str
    recorded_at: str

    def render(self) -> str:
        """One line (plus numbered steps for a workflow), as the agent reads it."""
        summary = _clip(" ".join(self.summary.split()), MAX_SUMMARY_CHARS)
        when = " ".join(self.applies_when.split())
        line = f"- [#{self.id}] {self.kind}, when {when}: {summary}"
        lines = [line]
        for n, step in enumerate(self.steps[:MAX_STEPS_SHOWN], start=1):
            lines.append(f"    {n}. {_clip(' '.join(step.split()), MAX_STEP_CHARS)}")
        if len(self.steps) > MAX_STEPS_SHOWN:
            lines.append(f"    (+{len(self.steps) - MAX_STEPS_SHOWN} more steps)")
        return "\n".join(lines)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _steps(raw: Any) -> tuple[str, ...]:
    if not raw:
        return ()
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return ()
    return tuple(str(s) for s in value) if isinstance(value, list) else ()  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]


_COLUMNS = "j.id, j.kind, j.topic, j.summary, j.applies_when, j.steps, j.status, j.recorded_at"
NOT_SOURCE_DERIVED = "j.involvement != 'source_derived'"
"""Content from outside (a source delta, a schedule) never steers the agent, whatever
its status: only what the owner stated or approved is rendered as guidance."""


def _item(row: Sequence[Any]) -> GuidanceItem:
    return GuidanceItem(
        id=int(row[0]),
        kind=str(row[1]),
        topic=str(row[2] or ""),
        summary=str(row[3] or ""),
        applies_when=str(row[4] or ""),
        steps=_steps(row[5]),
        status=str(row[6]),
        recorded_at=str(row[7]),
    )


def active_guidance(conn: Connection, scopes: Collection[str]) -> list[GuidanceItem]:
    """Active guidance in ``scopes``: constraints, preferences, workflows, lessons;
    newest first within a kind."""
    predicate = Predicate.build(scopes, statuses=("active",), kinds=GUIDANCE_KINDS)
    if predicate.selects_nothing:
        return []
    where, params = predicate.sql("j")
    order = " ".join(f"WHEN '{k}' THEN {i}" for i, k in enumerate(KIND_ORDER))
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM judgments AS j WHERE {where} AND {NOT_SOURCE_DERIVED} "
        f"ORDER BY CASE j.kind {order} END, j.recorded_at DESC, j.id DESC",
        params,
    ).fetchall()
    return [_item(r) for r in rows]


def guidance_by_id(
    conn: Connection, ids: Collection[int], scopes: Collection[str], statuses: Collection[str]
) -> dict[int, GuidanceItem]:
    """Guidance among ``ids`` visible in ``scopes`` with one of ``statuses``."""
    predicate = Predicate.build(scopes, statuses=statuses, kinds=GUIDANCE_KINDS)
    if predicate.selects_nothing or not ids:
        return {}
    where, params = predicate.sql("j", by_id=True)
    wanted = sorted(ids)
    out: dict[int, GuidanceItem] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM judgments AS j "
            f"WHERE j.id IN ({', '.join('?' * len(chunk))}) AND {where} "
            f"AND {NOT_SOURCE_DERIVED}",
            [*chunk, *params],
        ).fetchall()
        out.update({int(r[0]): _item(r) for r in rows})
    return out


def latest_event_id(conn: Connection) -> int:
    """The newest event id (0 when the log is empty): a watermark for deltas."""
    row = conn.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()
    return int(row[0])
