"""Who is acting and in what kind of turn: the facts the host knows.

The host (CLI, tray, Telegram runtime, MCP server, connector) builds a
``SessionFacts`` for each call; provenance and involvement are derived from it,
never from anything the caller puts in a payload.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum


class ActorKind(StrEnum):
    """Who authored a call."""

    OWNER = "owner"
    AGENT = "agent"
    CONNECTOR = "connector"
    MCP_CLIENT = "mcp_client"


class TurnKind(StrEnum):
    """What started the turn the call belongs to."""

    OWNER_MESSAGE = "owner_message"
    SOURCE_DELTA = "source_delta"
    SCHEDULED = "scheduled"
    MCP = "mcp"
    UI = "ui"
    CLI = "cli"


NON_OWNER_TURNS: frozenset[TurnKind] = frozenset(
    {TurnKind.SOURCE_DELTA, TurnKind.SCHEDULED, TurnKind.MCP}
)
"""Turns in which the owner is not the one speaking: outside content, a timer, or a
coding agent over MCP (whoever types to that agent, MAMA cannot tell it is the owner).
In them guidance, and retiring or replacing the owner's records, can only be proposed;
outcomes and links on the owner's records are refused (``ownership``)."""

SOURCE_TURNS: frozenset[TurnKind] = frozenset({TurnKind.SOURCE_DELTA, TurnKind.SCHEDULED})
"""Turns driven by outside content or a timer: what is saved in them is source-derived."""


@dataclass(frozen=True)
class SessionFacts:
    """The host's facts about one call: actor, turn, sources, backend, message."""

    actor_kind: ActorKind
    actor_name: str
    actor_version: str | None = None
    turn: TurnKind = TurnKind.OWNER_MESSAGE
    source_refs: tuple[str, ...] = ()
    backend: str | None = None
    message_ref: str | None = None
    tainted: bool = False
    """The turn carried or read words the owner did not write (a forwarded or quoted
    message, an observation read with a tool, a source digest): the agent's changes to
    what is the owner's become proposals, and its saves land ``proposed`` (``taint``)."""
    origin: str | None = None
    """Where the outside words came from, for a person (``#ops (slack)``, ``a forwarded
    message``): stamped in the provenance of what is saved, shown by every read."""

    @classmethod
    def owner_cli(cls, name: str = "owner") -> SessionFacts:
        """The owner typing a command."""
        return cls(actor_kind=ActorKind.OWNER, actor_name=name, turn=TurnKind.CLI)

    @classmethod
    def owner_ui(cls, name: str = "owner") -> SessionFacts:
        """The owner acting in the tray app's windows."""
        return cls(actor_kind=ActorKind.OWNER, actor_name=name, turn=TurnKind.UI)

    @property
    def is_owner(self) -> bool:
        return self.actor_kind is ActorKind.OWNER

    @property
    def is_owner_turn(self) -> bool:
        """False for source deltas, scheduled reports and MCP turns (the owner-turn rule)."""
        return self.turn not in NON_OWNER_TURNS

    @property
    def is_source_turn(self) -> bool:
        """True for source deltas and scheduled reports: saves are source-derived."""
        return self.turn in SOURCE_TURNS

    @property
    def acts_as_owner(self) -> bool:
        """The owner, speaking for themself: the only caller who may change the owner's
        records directly, create tombstones or attach outcomes and links to them."""
        return self.is_owner and self.is_owner_turn

    @property
    def owner_confirms(self) -> bool:
        """Whether an owner-only change made in this call needs the owner's approval
        first: anyone but the owner, in a turn with outside words in it."""
        return self.tainted and not self.acts_as_owner

    def with_taint(self, origin: str | None = None) -> SessionFacts:
        """These facts once the turn has carried or read outside words (from ``origin``,
        unless the turn already names where its outside words came from)."""
        if self.tainted:
            return self
        return replace(self, tainted=True, origin=self.origin or origin)

    @property
    def principal(self) -> str:
        """The caller's identity for receipts: a replay must come from the same caller."""
        return f"{self.actor_kind.value}:{self.actor_name}"

    def actor_json(self) -> dict[str, str | None]:
        """The actor as stored in an event row (``tainted`` only when it was)."""
        actor: dict[str, str | None] = {
            "kind": self.actor_kind.value,
            "name": self.actor_name,
            "version": self.actor_version,
            "turn": self.turn.value,
        }
        if self.tainted:
            actor["tainted"] = "yes"
        return actor
