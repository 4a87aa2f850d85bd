"""The one adapter from the action catalog to tools, and the one shape of a tool error.

Three front ends offer catalog actions to a model as tools: the MCP server for
coding agents (``app.mcp.server``), the turn's toolbox for the agent backends
(``app.backends.toolbox``) and the relay through which the Claude Code CLI
reaches that toolbox (``app.backends.claude_relay``). Each builds its tools
here, from the catalog's name, description and JSON schema, and runs a call
here: a refusal or a failure becomes an error result shaped
``{"error": {"code", "message", "details"?}}``, never an exception.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mama_core.errors import MamaError
from mama_core.json_types import JsonObject
from mama_core.memory import Catalog, Engine, Grant, SessionFacts

log = logging.getLogger(__name__)

INTERNAL_ERROR_CODE = "internal_error"
INTERNAL_ERROR_MESSAGE = "Something went wrong inside MAMA; the details are in its log."


@dataclass(frozen=True)
class ToolSpec:
    """One tool as offered to a model, and the catalog action behind it."""

    name: str
    action: str
    description: str
    input_schema: JsonObject
    read_only: bool = False
    output_schema: JsonObject | None = None
    """The JSON schema of a successful result (a read's result model), if it has one."""


def tool_name(action: str) -> str:
    """The tool name of an action (``memory.save`` → ``memory_save``): model APIs
    allow only letters, digits, ``_`` and ``-`` in tool names."""
    return action.replace(".", "_")


def catalog_tool(
    catalog: Catalog,
    action: str,
    *,
    name: str | None = None,
    description: str | None = None,
    input_schema: JsonObject | None = None,
    output_schema: JsonObject | None = None,
) -> ToolSpec:
    """The tool for ``action``: the catalog's description and schemas unless overridden
    (only where the tool is not the bare action)."""
    spec = catalog.actions[action]
    return ToolSpec(
        name=name or tool_name(action),
        action=action,
        description=description or spec.description,
        input_schema=catalog.json_schema(action) if input_schema is None else input_schema,
        read_only=not spec.mutates,
        output_schema=catalog.output_schema(action) if output_schema is None else output_schema,
    )


def agent_tools(engine: Engine, grant: Grant) -> list[ToolSpec]:
    """The tools for ``grant``, in catalog order; owner-only actions never appear."""
    return [
        catalog_tool(engine.catalog, name)
        for name, spec in engine.catalog.actions.items()
        if name in grant.actions and not spec.owner_only
    ]


def error_body(code: str, message: str, details: Mapping[str, Any] | None = None) -> JsonObject:
    """The one shape of a tool error: ``{"error": {"code", "message", "details"?}}``."""
    error: JsonObject = {"code": code, "message": message}
    if details:
        error["details"] = dict(details)
    return {"error": error}


def advertised_output_schema(result_schema: JsonObject) -> JsonObject:
    """The ``outputSchema`` a tool advertises: its result's schema, or the error body
    (a client may check an error result's structured content against it too)."""
    result = dict(result_schema)
    defs: JsonObject = dict(result.pop("$defs", {}))
    defs["ToolResult"] = result
    defs["ToolError"] = ERROR_SCHEMA
    return {
        "type": "object",
        "$defs": defs,
        "anyOf": [{"$ref": "#/$defs/ToolResult"}, {"$ref": "#/$defs/ToolError"}],
    }


ERROR_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "details": {"type": "object"},
            },
            "required": ["code", "message"],
        }
    },
    "required": ["error"],
    "additionalProperties": False,
}
"""The schema of ``error_body``: what a refused or failed call returns."""


def result_text(result: Mapping[str, Any]) -> str:
    """A tool result as the text a model reads (stable key order, non-ASCII kept)."""
    return json.dumps(result, ensure_ascii=False, sort_keys=True, default=str)


@dataclass(frozen=True)
class ToolCall:
    """What one tool call returned: the result (or the error body) and whether it failed."""

    tool: str
    result: JsonObject
    is_error: bool

    @property
    def error(self) -> JsonObject:
        """The error's ``code``, ``message`` and ``details`` (empty on success)."""
        return dict(self.result.get("error") or {}) if self.is_error else {}


async def run_tool(
    engine: Engine,
    tool: ToolSpec,
    payload: Mapping[str, Any],
    session: SessionFacts,
    grant: Grant,
) -> ToolCall:
    """Run ``tool``'s action for ``session`` under ``grant``; a refusal or failure becomes
    an error result, never an exception."""
    try:
        result = await engine.dispatch_async(tool.action, payload, session, grant)
    except MamaError as exc:
        return refused(tool.name, exc)
    except Exception:
        log.exception("tool %s failed inside MAMA", tool.name)
        return failed(tool.name)
    return ToolCall(tool.name, result, False)


def refused(tool: str, exc: MamaError) -> ToolCall:
    """The error result of a refusal (the engine's code, message and details)."""
    log.info("tool %s refused: %s", tool, exc.code)
    return ToolCall(tool, error_body(exc.code, exc.message, exc.details), True)


def failed(tool: str) -> ToolCall:
    """The error result of a bug inside MAMA (the traceback went to the log)."""
    return ToolCall(tool, error_body(INTERNAL_ERROR_CODE, INTERNAL_ERROR_MESSAGE), True)
