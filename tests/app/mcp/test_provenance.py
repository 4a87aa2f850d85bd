"""What an MCP save records about who made it: the client's own name and version,
and that the owner never saw it (agent_inferred), in either protocol era."""

from __future__ import annotations

import pytest

from app.mcp.project_scope import ProjectBinding
from mama_core.memory import Engine
from tests.app.mcp.conftest import mcp_client, owner_dispatch, structured

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["initialize", "envelope"])
async def test_save_is_agent_inferred_by_the_named_client(
    engine: Engine, alpha: ProjectBinding, mode: str
) -> None:
    async with mcp_client(engine, alpha, name="Cursorish", version="0.9.1", mode=mode) as client:
        receipt = structured(
            await client.call_tool("save", {"kind": "fact", "summary": "The CI runs on two cores."})
        )
    read = owner_dispatch(engine, "memory.read", {"id": receipt["judgment_id"]})
    record = read["record"]
    assert record["involvement"] == "agent_inferred"
    assert record["provenance"]["actor_kind"] == "mcp_client"
    assert record["provenance"]["actor_name"] == "Cursorish"
    assert record["provenance"]["actor_version"] == "0.9.1"
    assert record["provenance"]["turn"] == "mcp"
    (event,) = read["events"]
    assert event["actor"] == {
        "kind": "mcp_client",
        "name": "Cursorish",
        "version": "0.9.1",
        "turn": "mcp",
    }


async def test_the_owner_saving_the_same_is_owner_stated(engine: Engine) -> None:
    # Positive control: involvement is a fact of the session, not a constant.
    receipt = owner_dispatch(engine, "memory.save", {"kind": "fact", "summary": "Two cores."})
    record = owner_dispatch(engine, "memory.read", {"id": receipt["judgment_id"]})["record"]
    assert record["involvement"] == "owner_stated"


async def test_payload_cannot_claim_provenance(engine: Engine, alpha: ProjectBinding) -> None:
    async with mcp_client(engine, alpha) as client:
        result = await client.call_tool(
            "save",
            {"kind": "fact", "summary": "x", "involvement": "owner_approved"},
        )
    assert result.is_error
