"""A coding agent over ``mama mcp`` cannot change the owner's records: its retire
becomes a proposal the owner decides, outcomes and links on them are refused (an
MCP turn is not the owner's), and it never leaves a tombstone. On its own records
the same tools work at once (the controls)."""

from __future__ import annotations

import pytest

from app.mcp.project_scope import ProjectBinding
from mama_core.memory import Engine
from tests.app.mcp.conftest import error_code, mcp_client, owner_dispatch, structured

pytestmark = pytest.mark.anyio

RULE = {
    "kind": "constraint",
    "summary": "Never force-push to main",
    "applies_when": "pushing",
    "scopes": ["project:alpha"],
}


async def test_retiring_the_owners_rule_over_mcp_is_a_proposal(
    engine: Engine, alpha: ProjectBinding
) -> None:
    rule = owner_dispatch(engine, "memory.save", RULE)["judgment_id"]
    async with mcp_client(engine, alpha) as client:
        proposed = structured(
            await client.call_tool("retire", {"id": rule, "reason": "we rebase now"})
        )
        seen = structured(await client.call_tool("get", {"id": rule}))
        found = structured(await client.call_tool("search", {"query": "force-push main"}))
        again = await client.call_tool("retire", {"id": rule, "reason": "really"})
        tombstone = await client.call_tool(
            "retire", {"id": rule, "reason": "never", "forbid_resave": True}
        )
        outcome = await client.call_tool("update_outcome", {"id": rule, "outcome": "it broke"})
        own = structured(
            await client.call_tool("save", {"kind": "fact", "summary": "CI takes 8 minutes."})
        )
        link = await client.call_tool(
            "link", {"src": own["judgment_id"], "dst": rule, "kind": "relates_to"}
        )
        # The controls: its own record it retires, with an outcome first.
        own_outcome = structured(
            await client.call_tool(
                "update_outcome", {"id": own["judgment_id"], "outcome": "now 5 minutes"}
            )
        )
        own_retired = structured(
            await client.call_tool("retire", {"id": own["judgment_id"], "reason": "faster now"})
        )
        own_tombstone = await client.call_tool(
            "retire", {"id": own["judgment_id"], "reason": "x", "forbid_resave": True}
        )
    assert proposed["proposed"] is True and proposed["status"] == "active"
    assert seen["record"]["status"] == "active"
    assert seen["record"]["pending_change"] == {
        "id": proposed["change_id"],
        "action": "memory.retire",
        "state": "pending",
    }
    assert rule in [r["id"] for r in found["results"]]
    assert error_code(again) == "invalid_transition"  # one change waits at a time
    assert error_code(tombstone) == "not_granted"
    assert error_code(outcome) == "owner_turn_required"
    assert error_code(link) == "owner_turn_required"
    assert own_outcome["status"] == "active"
    assert own_retired["status"] == "stale"
    assert error_code(own_tombstone) == "not_granted"
    assert engine.store.conn.execute("SELECT count(*) FROM tombstones").fetchone()[0] == 0

    owner_view = owner_dispatch(engine, "memory.read", {"id": rule})
    assert owner_view["record"]["status"] == "active"
    assert owner_view["record"]["pending_change"]["proposed_by"]["name"] == "test-agent"
    assert owner_view["record"]["pending_change"]["proposed_by"]["turn"] == "mcp"
    approved = owner_dispatch(engine, "review.approve", {"id": rule})
    assert approved["status"] == "stale"
    last = owner_dispatch(engine, "memory.read", {"id": rule})["events"][-1]
    assert last["action"] == "review.approve" and last["actor"]["kind"] == "owner"
