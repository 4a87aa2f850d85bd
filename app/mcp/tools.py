"""The MCP tools: each one is a catalog action, called as the connected client.

A tool's input schema is its action's pydantic model's JSON schema, unchanged,
and its description is the catalog's, so what a model sees here is what the
engine validates. Every call runs with the server's project grant and with
session facts built from the client's own ``initialize`` (or request envelope)
identity; a refusal comes back as an MCP error result carrying the catalog's
code and message, never as a protocol error.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from app.mcp.identity import UNKNOWN_CLIENT, ClientIdentity
from app.mcp.project_scope import ProjectBinding
from mama_core.errors import MamaError
from mama_core.memory import Engine
from mama_core.memory.errors import InvalidInputError, UnknownActionError

log = logging.getLogger(__name__)

INTERNAL_ERROR_CODE = "internal_error"

_NO_ARGUMENTS: dict[str, Any] = {
    "type": "object",
    "properties": {},
    "additionalProperties": False,
    "title": "CheckpointLoadInput",
}


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool and the catalog action behind it."""

    name: str
    action: str
    description: str | None = None
    """Overrides the catalog's description (only where the tool is not the bare action)."""
    read_only: bool = False


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("save", "memory.save"),
    ToolSpec("search", "memory.search", read_only=True),
    ToolSpec("get", "memory.read", read_only=True),
    ToolSpec("update_outcome", "memory.update_outcome"),
    ToolSpec("retire", "memory.retire"),
    ToolSpec("link", "memory.link"),
    ToolSpec("timeline", "memory.timeline", read_only=True),
    ToolSpec("checkpoint_save", "checkpoint.save"),
    ToolSpec(
        "checkpoint_load",
        "checkpoint.list",
        description="Load this project's latest checkpoint: where the work stood when it was "
        "last saved (null if none).",
        read_only=True,
    ),
)
TOOLS_BY_NAME: Mapping[str, ToolSpec] = {t.name: t for t in TOOLS}


def client_identity(info: types.Implementation | None) -> ClientIdentity:
    """The identity from ``clientInfo``; a client that gave none is named as unknown."""
    if info is None or not info.name.strip():
        return ClientIdentity(UNKNOWN_CLIENT)
    return ClientIdentity(info.name.strip(), (info.version or "").strip() or None)


def list_tools(engine: Engine) -> list[types.Tool]:
    """The tool list: names, catalog descriptions and catalog input schemas."""
    tools: list[types.Tool] = []
    for spec in TOOLS:
        action = engine.catalog.actions[spec.action]
        schema = (
            _NO_ARGUMENTS
            if spec.name == "checkpoint_load"
            else engine.catalog.json_schema(spec.action)
        )
        tools.append(
            types.Tool(
                name=spec.name,
                description=spec.description or action.description,
                input_schema=schema,
                annotations=types.ToolAnnotations(
                    read_only_hint=spec.read_only,
                    # Nothing is ever deleted: a retire or a revision is a later record.
                    destructive_hint=False,
                    open_world_hint=False,
                ),
            )
        )
    return tools


async def call_tool(
    engine: Engine,
    binding: ProjectBinding,
    client: ClientIdentity,
    name: str,
    arguments: Mapping[str, Any] | None,
) -> types.CallToolResult:
    """Run tool ``name`` for ``client``; every failure becomes an error result."""
    try:
        result = await _run(engine, binding, client, name, dict(arguments or {}))
    except MamaError as exc:
        log.info("tool %s refused for %s: %s", name, client.name, exc.code)
        return error_result(exc.to_dict())
    except Exception:
        log.exception("tool %s failed inside MAMA", name)
        return error_result(
            {
                "code": INTERNAL_ERROR_CODE,
                "message": "Something went wrong inside MAMA; the details are in its log.",
            }
        )
    return types.CallToolResult(
        content=[types.TextContent(text=_json(result))], structured_content=result
    )


def error_result(error: dict[str, Any]) -> types.CallToolResult:
    """An MCP error result whose text starts with the catalog's code and message."""
    text = f"{error['code']}: {error['message']}"
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content={"error": error},
        is_error=True,
    )


async def _run(
    engine: Engine,
    binding: ProjectBinding,
    client: ClientIdentity,
    name: str,
    payload: dict[str, Any],
) -> dict[str, Any]:
    spec = TOOLS_BY_NAME.get(name)
    if spec is None:
        raise UnknownActionError(
            f"There is no tool named {name!r}; the tools are {', '.join(TOOLS_BY_NAME)}.",
            details={"tool": name},
        )
    session = client.session_facts()
    grant = binding.grant()
    if spec.name == "checkpoint_load":
        if payload:
            raise InvalidInputError(
                "checkpoint_load takes no arguments.", details={"fields": sorted(payload)}
            )
        listed = await engine.dispatch_async(
            spec.action, {"scope": binding.project_scope, "limit": 1}, session, grant
        )
        checkpoints = listed.get("checkpoints") or []
        return {"checkpoint": checkpoints[0] if checkpoints else None}
    return await engine.dispatch_async(spec.action, payload, session, grant)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
