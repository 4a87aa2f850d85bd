"""Who is calling over MCP: the client as it named itself, and the session facts
the engine stamps from that (kept free of the MCP SDK, so hooks load fast)."""

from __future__ import annotations

from dataclasses import dataclass

from mama_core.memory import ActorKind, SessionFacts, TurnKind

UNKNOWN_CLIENT = "unknown-mcp-client"


@dataclass(frozen=True)
class ClientIdentity:
    """The connected client as it named itself (``clientInfo``)."""

    name: str
    version: str | None = None

    def session_facts(self) -> SessionFacts:
        """The facts the engine stamps as provenance: an MCP client in an MCP turn."""
        return SessionFacts(
            actor_kind=ActorKind.MCP_CLIENT,
            actor_name=self.name,
            actor_version=self.version,
            turn=TurnKind.MCP,
        )
