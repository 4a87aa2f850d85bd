"""The one interface every agent backend implements, and its errors.

The runtime runs one turn at a time: it builds a ``TurnRequest`` (the prompt
text with context, and the raw input), hands the backend a ``ToolBox`` bound to
that turn's session facts, and gets a ``TurnReply``. A backend never touches
the store except through the toolbox.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from mama_core.errors import MamaError

if TYPE_CHECKING:
    from collections.abc import Callable

    from app.backends.toolbox import ToolBox, ToolSpec
    from app.durable.evidence import Delivered
    from app.durable.mailbox import InputKind


@dataclass(frozen=True)
class TurnRequest:
    """One turn: ``prompt`` is what a model reads; ``raw`` what the input said."""

    prompt: str
    raw: str
    kind: InputKind
    input_id: int
    evidence: Delivered | None = None
    """Set when the owner forwarded or quoted outside content: not the owner's words."""
    observations: tuple[int, ...] = ()
    """A source delta's new items (observation ids), for a backend that reads them
    itself (command mode); a model reads them from the prompt's digest."""
    on_text: Callable[[str], None] | None = field(default=None, compare=False)
    """Called with the reply written so far, each time the agent writes more (a backend
    that streams its messages calls it; the chat window shows it as it grows)."""


@dataclass(frozen=True)
class TurnReply:
    """What the turn says to the owner, and proposals to show as review cards."""

    text: str
    cards: tuple[int, ...] = field(default=())


class BackendError(MamaError):
    """A turn failed for a reason that may pass (a crash, a timeout): retry later."""

    code = "backend_failed"
    exit_code = 50


class ToolsUnreachableError(BackendError):
    """The agent ran a turn without MAMA's tools (Claude Code's MCP server was still
    ``pending``, or ``failed``): it could act on nothing, so the turn is not done. The
    mailbox retries it in a new process of the same conversation, whose tools start anew."""

    code = "agent_tools_unreachable"


class BackendUnavailableError(MamaError):
    """The backend cannot run at all here (not installed, not configured).

    Retrying will not help; the message tells the owner what to do.
    """

    code = "backend_unavailable"
    exit_code = 51


class AgentBackend(Protocol):
    """A conversation with an agent, one turn at a time."""

    name: str
    """Stable name, stamped into provenance (``backend``) and the actor."""

    speaks_for_owner: bool
    """True when the owner's own messages are commands this backend runs as the owner
    (command mode: no model reads them, so nothing else speaks in that turn)."""

    writes_briefs: bool
    """False when there is no model to write the brief: MAMA composes it itself."""

    @property
    def version(self) -> str | None:
        """The agent's version when known (e.g. the CLI's), for provenance."""
        ...

    @property
    def wants_session_context(self) -> bool:
        """True while the conversation is new: the next prompt must carry the
        session-start context (guidance index, checkpoints, recent exchanges)."""
        ...

    async def start(self, tools: list[ToolSpec]) -> None:
        """Get ready to offer ``tools`` (may start a process); raise
        ``BackendUnavailableError`` if it cannot run here."""
        ...

    async def run_turn(self, request: TurnRequest, tools: ToolBox) -> TurnReply:
        """Run one turn; raise ``BackendError`` for a failure worth retrying."""
        ...

    async def close(self) -> None:
        """Stop any process; the conversation may be resumed by a later ``start``."""
        ...

    async def forget_session(self) -> list[Path]:
        """End the conversation for good after a purge (it may hold the erased text):
        delete its transcripts and return the files removed."""
        ...
