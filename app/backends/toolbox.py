"""The turn's toolbox: the catalog's actions under the agent's grant, for one turn.

Every agent backend (the local model, Codex, the command mode, and the Claude
Code CLI through ``claude_relay``) calls tools through a ``ToolBox``. Its tools
come from ``app.present.catalog_tools`` and are limited to the grant's actions, which
never include the owner-only verbs. A ``ToolBox`` is bound to one turn's
``SessionFacts``, so the dispatcher stamps provenance and applies the owner-turn
rule from what the host knows, never from what the model says; a read that
brings outside words into the turn taints the facts for the rest of it.

A mutation without a ``command_id`` gets one derived from the input and the
call's canonical payload: if a crash makes the runtime run the same input
again, the same call replays its first receipt instead of writing twice.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from app.present.catalog_tools import (
    ToolCall,
    ToolSpec,
    agent_tools,
    error_body,
    result_text,
    run_tool,
    tool_name,
)
from mama_core.canonical import canonical_hash
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.memory.taint import carries_outside_words, origin_of_read

log = logging.getLogger(__name__)

__all__ = ["ToolBox", "ToolOutcome", "ToolSpec", "agent_tools", "tool_name"]


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool call returned: text for the model, and the parsed result."""

    tool: str
    text: str
    is_error: bool
    result: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, call: ToolCall) -> ToolOutcome:
        """The outcome of ``call``, its result rendered as the text a model reads."""
        return cls(call.tool, result_text(call.result), call.is_error, call.result)


class ToolBox:
    """The catalog, bound to one turn's facts and the agent's grant."""

    def __init__(self, engine: Engine, grant: Grant, facts: SessionFacts, input_id: int) -> None:
        self.engine = engine
        self.grant = grant
        self.facts = facts
        self.input_id = input_id
        self.specs = agent_tools(engine, grant)
        self._by_name = {s.name: s for s in self.specs}
        self.calls: list[ToolOutcome] = []

    def has(self, name: str) -> bool:
        return name in self._by_name

    async def call(self, name: str, arguments: object) -> ToolOutcome:
        """Run tool ``name``; a refusal becomes an error result, never an exception."""
        spec = self._by_name.get(name)
        if spec is None:
            outcome = _error(name, "unknown_tool", f"There is no tool {name!r}.")
        elif not isinstance(arguments, dict):
            outcome = _error(name, "invalid_input", "Tool arguments must be an object.")
        else:
            payload: dict[str, Any] = dict(arguments)  # pyright: ignore[reportUnknownArgumentType]
            if not spec.read_only and not payload.get("command_id"):
                payload["command_id"] = self._derived_command_id(spec.action, payload)
            called = await run_tool(self.engine, spec, payload, self.facts, self.grant)
            outcome = ToolOutcome.of(called)
            if spec.read_only and not called.is_error:
                self._note_outside_words(spec.action, called.result)
        self.calls.append(outcome)
        return outcome

    def _note_outside_words(self, action: str, result: dict[str, Any]) -> None:
        """Taint the rest of the turn once a read brought in words the owner did not
        write: from then on the agent's owner-only changes are proposals."""
        if self.facts.tainted or not carries_outside_words(action, result):
            return
        self.facts = self.facts.with_taint(origin_of_read(action, result))
        log.info(
            "input %s: %s read outside content; the turn is now tainted", self.input_id, action
        )

    def _derived_command_id(self, action: str, payload: dict[str, Any]) -> str:
        try:
            digest = canonical_hash({"action": action, "payload": payload})[:24]
        except Exception:  # not canonicalisable: the dispatcher will refuse it anyway
            digest = "x"
        return f"in{self.input_id}:{action}:{digest}"


def _error(name: str, code: str, message: str) -> ToolOutcome:
    return ToolOutcome.of(ToolCall(name, error_body(code, message), True))
