"""The vocabulary of the memory model, at the bottom of ``mama_core``.

Kinds, statuses, involvement and edge kinds (the values the schema's CHECK
constraints allow; as enums, pydantic publishes them in each action's JSON
schema), the judgment record, the text its vector is computed from, and the
change-set a commit emits. Every layer above (memory, recall, guidance, app,
ui) imports these names from here; this module imports nothing of the project but
the name of free-form JSON (``json_types``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypedDict

from mama_core.json_types import JsonObject


class Kind(StrEnum):
    """What a judgment is."""

    DECISION = "decision"
    FACT = "fact"
    PREFERENCE = "preference"
    CONSTRAINT = "constraint"
    LESSON = "lesson"
    WORKFLOW = "workflow"
    TASK = "task"
    SCHEDULE = "schedule"
    COMMITMENT = "commitment"
    """Who owes what to whom by when; its terms live beside it (``commitments``)."""


GUIDANCE_KINDS: frozenset[Kind] = frozenset(
    {Kind.PREFERENCE, Kind.CONSTRAINT, Kind.LESSON, Kind.WORKFLOW}
)
"""The kinds that steer the agent: they need ``applies_when`` and owner review."""

KINDS: tuple[str, ...] = tuple(k.value for k in Kind)
"""Every kind's name, in a fixed order (the vector cache codes kinds by position)."""

GUIDANCE_KIND_NAMES: tuple[str, ...] = tuple(k.value for k in Kind if k in GUIDANCE_KINDS)
"""The guidance kinds' names, in ``Kind`` order."""


class Status(StrEnum):
    """Where a judgment stands; only ``active`` is believed."""

    PROPOSED = "proposed"
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    STALE = "stale"
    CONTRADICTED = "contradicted"
    REJECTED = "rejected"
    PURGED = "purged"


STATUSES: tuple[str, ...] = tuple(s.value for s in Status)
"""Every status's name, in a fixed order (the vector cache codes statuses by position)."""

RETIRED_STATUSES: tuple[str, ...] = tuple(
    s.value for s in Status if s not in (Status.PROPOSED, Status.ACTIVE)
)
"""Statuses of records no longer believed nor waiting for review."""

WORLD_STATUSES: frozenset[Status] = frozenset({Status.ACTIVE, Status.SUPERSEDED, Status.STALE})
"""Statuses of records that held in the world for their validity window."""


class Involvement(StrEnum):
    """What the owner had to do with a judgment: a fact the host records."""

    OWNER_STATED = "owner_stated"
    OWNER_APPROVED = "owner_approved"
    AGENT_INFERRED = "agent_inferred"
    SOURCE_DERIVED = "source_derived"


OWNER_INVOLVEMENTS: frozenset[Involvement] = frozenset(
    {Involvement.OWNER_STATED, Involvement.OWNER_APPROVED}
)


class EdgeKind(StrEnum):
    """How one judgment relates to another."""

    SUPERSEDES = "supersedes"
    REFINES = "refines"
    CONTRADICTS = "contradicts"
    BUILDS_ON = "builds_on"
    DERIVED_FROM = "derived_from"
    RELATES_TO = "relates_to"
    CAUSED_BY = "caused_by"


class RetireStatus(StrEnum):
    """The statuses a retirement may set."""

    STALE = "stale"
    SUPERSEDED = "superseded"
    CONTRADICTED = "contradicted"


JUDGMENT_COLUMNS = (
    "id, kind, topic, summary, details, applies_when, steps, confidence, status, "
    "superseded_by, outcome, valid_from, valid_until, recorded_at, provenance, involvement, "
    "command_id, content_hash"
)
"""The columns of ``judgments`` in ``Judgment.from_row`` order."""


def select_columns(alias: str) -> str:
    """The judgment columns qualified with ``alias``, in ``Judgment.from_row`` order."""
    return ", ".join(f"{alias}.{c.strip()}" for c in JUDGMENT_COLUMNS.split(","))


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
    provenance: JsonObject
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

    def content(self) -> JudgmentContent:
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


class JudgmentContent(TypedDict):
    """A judgment's immutable fields, in the order its ``content_hash`` covers them."""

    kind: str
    topic: str
    summary: str
    details: str
    applies_when: str | None
    steps: list[str]
    confidence: float | None
    valid_from: str
    recorded_at: str
    provenance: JsonObject
    command_id: str


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
    provenance: JsonObject,
    command_id: str,
) -> JudgmentContent:
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


def embedding_text(topic: str, summary: str, details: str, applies_when: str | None) -> str:
    """The text a judgment's vector is computed from."""
    return "\n".join(part for part in (topic, summary, details, applies_when or "") if part)


@dataclass(frozen=True)
class ChangeSet:
    """Ids a commit touched: the event, new judgments, status changes and purges, and
    every judgment it read or amended (a link, an outcome, a change proposed to it)."""

    event_ids: tuple[int, ...]
    added: tuple[int, ...]
    status_changed: tuple[int, ...]
    purged: tuple[int, ...]
    action: str
    command_id: str
    touched: tuple[int, ...] = ()

    @classmethod
    def from_transitions(
        cls,
        event_id: int,
        action: str,
        command_id: str | None,
        transitions: Iterable[Mapping[str, Any]],
        touched: Iterable[int] = (),
    ) -> ChangeSet:
        """The change-set of one event from its status transitions (the event payload's
        ``transitions``): a transition from nothing adds a judgment, one to ``purged``
        purges it, any other changes its status. ``touched`` (the payload's
        ``touched``) also names records whose status did not change, e.g. one a
        change was proposed to.

        The one mapping for both the writer's own commits and the events other
        processes committed, so a subscriber cannot tell them apart.
        """
        added: list[int] = []
        changed: list[int] = []
        purged: list[int] = []
        for transition in transitions:
            judgment_id = int(transition["id"])
            if transition.get("from") is None:
                added.append(judgment_id)
            elif transition.get("to") == Status.PURGED:
                purged.append(judgment_id)
            else:
                changed.append(judgment_id)
        return cls(
            event_ids=(event_id,),
            added=tuple(added),
            status_changed=tuple(dict.fromkeys(changed)),
            purged=tuple(purged),
            action=action,
            command_id=command_id or "",
            touched=tuple(int(t) for t in touched),
        )
