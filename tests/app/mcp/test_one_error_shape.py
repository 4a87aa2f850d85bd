"""One adapter, one error shape: the MCP server for coding agents and the turn's
toolbox (which the Claude relay serves) answer the same refusal with the same
``{"error": {code, message, details}}`` body."""

from __future__ import annotations

import json

import pytest

from app.backends.toolbox import ToolBox
from app.mcp.identity import ClientIdentity
from app.mcp.project_scope import ProjectBinding
from mama_core.memory import Engine
from tests.app.mcp.conftest import mcp_client, structured

pytestmark = pytest.mark.anyio

TOO_LONG = {"kind": "fact", "summary": "x" * 5000}
FINE = {"kind": "fact", "summary": "Herons wait at the shallows"}


async def test_mcp_and_toolbox_refuse_with_one_body(engine: Engine, alpha: ProjectBinding) -> None:
    async with mcp_client(engine, alpha) as client:
        over_mcp = structured(await client.call_tool("save", TOO_LONG))
        saved_mcp = structured(await client.call_tool("save", FINE))
    facts = ClientIdentity("test-agent", "1.2.3").session_facts()  # as the server builds them
    toolbox = ToolBox(engine, alpha.grant(), facts, input_id=3)
    refused = await toolbox.call("memory_save", TOO_LONG)
    saved = await toolbox.call("memory_save", {**FINE, "summary": "Herons fish at dawn"})

    assert refused.is_error and over_mcp["error"]["code"] == "invalid_input"
    assert refused.result == over_mcp  # the same code, message and details
    assert json.loads(refused.text) == over_mcp
    assert over_mcp["error"]["details"]["fields"] == ["summary"]
    # Positive controls: the same paths accept a valid save.
    assert saved_mcp["status"] == "active"
    assert not saved.is_error and saved.result["status"] == "active"
