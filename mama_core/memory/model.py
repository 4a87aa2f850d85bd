"""The vocabulary of the memory model: kinds, statuses, involvement, edges.

These are the values the schema's CHECK constraints allow; keeping them as
enums here lets pydantic publish them in each action's JSON schema.
"""

from __future__ import annotations

from enum import StrEnum


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


GUIDANCE_KINDS: frozenset[Kind] = frozenset(
    {Kind.PREFERENCE, Kind.CONSTRAINT, Kind.LESSON, Kind.WORKFLOW}
)
"""The kinds that steer the agent: they need ``applies_when`` and owner review."""


class Status(StrEnum):
    """Where a judgment stands; only ``active`` is believed."""

    PROPOSED = "proposed"
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    STALE = "stale"
    CONTRADICTED = "contradicted"
    REJECTED = "rejected"
    PURGED = "purged"


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
