"""The agent's tools: the catalog's actions under the agent's grant, for one turn.

Every backend offers the same tools, built from the catalog (name, description,
JSON schema) and limited to the grant's actions, which never include the
owner-only verbs. A ``ToolBox`` is bound to one turn's ``SessionFacts``, so
the dispatcher stamps provenance and applies the owner-turn rule from what the
host knows, never from what the model says.

A mutation without a ``command_id`` gets one derived from the input and the
call's canonical payload: if a crash makes the runtime run the same input
again, the same call replays its first receipt instead of writing twice.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from mama_core.errors import MamaError
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.memory.canonical import canonical_hash

log = logging.getLogger(__name__)


def tool_name(action: str) -> str:
    """The tool name of an action (``memory.save`` → ``memory_save``): model APIs
    allow only letters, digits, ``_`` and ``-`` in tool names."""
    return action.replace(".", "_")


@dataclass(frozen=True)
class ToolSpec:
    """One tool as offered to a model."""

    name: str
    action: str
    description: str
    input_schema: dict[str, Any]


def agent_tools(engine: Engine, grant: Grant) -> list[ToolSpec]:
    """The tools for ``grant``, in catalog order; owner-only actions never appear."""
    specs: list[ToolSpec] = []
    for name, spec in engine.catalog.actions.items():
        if name not in grant.actions or spec.owner_only:
            continue
        specs.append(
            ToolSpec(tool_name(name), name, spec.description, engine.catalog.json_schema(name))
        )
    return specs


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool call returned: text for the model, and the parsed result."""

    tool: str
    text: str
    is_error: bool
    result: dict[str, Any] = field(default_factory=dict)


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
            outcome = self._error(name, "unknown_tool", f"There is no tool {name!r}.")
        elif not isinstance(arguments, dict):
            outcome = self._error(name, "invalid_input", "Tool arguments must be an object.")
        else:
            payload: dict[str, Any] = dict(arguments)  # pyright: ignore[reportUnknownArgumentType]
            outcome = await self._dispatch(spec, payload)
        self.calls.append(outcome)
        return outcome

    async def _dispatch(self, spec: ToolSpec, payload: dict[str, Any]) -> ToolOutcome:
        action_spec = self.engine.catalog.actions[spec.action]
        if action_spec.mutates and not payload.get("command_id"):
            payload["command_id"] = self._derived_command_id(spec.action, payload)
        try:
            result = await self.engine.dispatch_async(spec.action, payload, self.facts, self.grant)
        except MamaError as exc:
            log.info("tool %s refused: %s", spec.name, exc.code)
            return self._error(spec.name, exc.code, exc.message)
        except Exception:
            log.exception("tool %s failed", spec.name)
            return self._error(spec.name, "internal_error", "The action failed inside MAMA.")
        text = json.dumps(result, ensure_ascii=False, sort_keys=True, default=str)
        return ToolOutcome(spec.name, text, False, result)

    def _derived_command_id(self, action: str, payload: dict[str, Any]) -> str:
        try:
            digest = canonical_hash({"action": action, "payload": payload})[:24]
        except Exception:  # not canonicalisable: the dispatcher will refuse it anyway
            digest = "x"
        return f"in{self.input_id}:{action}:{digest}"

    @staticmethod
    def _error(name: str, code: str, message: str) -> ToolOutcome:
        body = {"error": {"code": code, "message": message}}
        return ToolOutcome(name, json.dumps(body, ensure_ascii=False), True, body)
