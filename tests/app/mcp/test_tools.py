"""Every MCP tool through an in-memory client session, success and refusal."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from jsonschema import Draft202012Validator

from app.mcp.project_scope import ProjectBinding
from app.mcp.server import TOOLS
from mama_core.memory import Engine
from tests.app.mcp.conftest import error_code, mcp_client, owner_dispatch, structured

pytestmark = pytest.mark.anyio

DECISION = {"kind": "decision", "topic": "storage", "summary": "We keep the store in SQLCipher."}


async def test_tools_are_the_catalog_actions_with_their_schemas(
    engine: Engine, alpha: ProjectBinding
) -> None:
    async with mcp_client(engine, alpha) as client:
        listed = (await client.list_tools()).tools
    by_name = {tool.name: tool for tool in listed}
    assert list(by_name) == [spec.name for spec in TOOLS]
    assert set(by_name) == {
        "save",
        "search",
        "get",
        "update_outcome",
        "retire",
        "link",
        "timeline",
        "commitments",
        "checkpoint_save",
        "checkpoint_load",
    }
    for spec in TOOLS:
        tool = by_name[spec.name]
        assert tool.description
        if spec.name == "checkpoint_load":
            assert tool.input_schema["properties"] == {}
            continue
        assert tool.input_schema == engine.catalog.json_schema(spec.action)
        catalog_words = engine.catalog.actions[spec.action].description
        if spec.name == "search":  # the catalog's words, then what team results are
            assert tool.description.startswith(catalog_words + " ")
            assert "team_results" in tool.description
        else:
            assert tool.description == catalog_words
        assert not engine.catalog.actions[spec.action].owner_only


async def test_reads_with_a_result_model_advertise_it_as_their_output_schema(
    engine: Engine, alpha: ProjectBinding
) -> None:
    """The output schema is the result model's (or the error body's: a refusal must still
    pass a client that checks error results too); the client session checks every
    successful call's structured content against it."""
    async with mcp_client(engine, alpha) as client:
        by_name = {tool.name: tool for tool in (await client.list_tools()).tools}
        listed = structured(await client.call_tool("commitments", {}))
        refused = await client.call_tool("commitments", {"limit": 0})
    with_schema = {name for name, tool in by_name.items() if tool.output_schema is not None}
    assert with_schema == {"commitments", "checkpoint_load", "timeline", "get", "search"}
    assert by_name["save"].output_schema is None  # a receipt: no model yet (the control)
    schema = by_name["commitments"].output_schema
    assert schema is not None and schema["type"] == "object"
    assert schema["$defs"]["ToolResult"]["title"] == "CommitmentListResult"
    validator = Draft202012Validator(schema)
    assert not list(validator.iter_errors(listed))
    assert error_code(refused) == "invalid_input"
    assert not list(validator.iter_errors(structured(refused)))
    assert list(validator.iter_errors({"commitments": [{"id": "x"}]}))  # it can fail


async def test_save_then_search_and_get(engine: Engine, alpha: ProjectBinding) -> None:
    async with mcp_client(engine, alpha) as client:
        receipt = structured(await client.call_tool("save", DECISION))
        found = structured(await client.call_tool("search", {"query": "SQLCipher store"}))
        record = structured(await client.call_tool("get", {"id": receipt["judgment_id"]}))
    assert receipt["status"] == "active"
    assert [r["id"] for r in found["results"]] == [receipt["judgment_id"]]
    assert found["results"][0]["scopes"] == ["project:alpha"]
    assert record["record"]["summary"] == DECISION["summary"]
    assert record["record"]["provenance"]["actor_name"] == "test-agent"
    assert record["events"][0]["action"] == "memory.save"


async def test_save_refusals(engine: Engine, alpha: ProjectBinding) -> None:
    async with mcp_client(engine, alpha) as client:
        missing = await client.call_tool("save", {"kind": "decision"})
        foreign = await client.call_tool("save", {**DECISION, "scopes": ["project:beta"]})
        global_scope = await client.call_tool("save", {**DECISION, "scopes": ["global"]})
        secret = await client.call_tool(
            "save",
            {"kind": "fact", "summary": "The key is AKIAIOSFODNN7EXAMPLE for the bucket"},
        )
        guidance_without_when = await client.call_tool(
            "save", {"kind": "lesson", "summary": "Run the tests first."}
        )
        # The connection still works after every refusal: the protocol never broke.
        ok = structured(await client.call_tool("save", DECISION))
    assert error_code(missing) == "invalid_input"
    assert error_code(foreign) == "scope_denied"
    assert error_code(global_scope) == "scope_denied"
    assert error_code(secret) == "secret_refused"
    assert error_code(guidance_without_when) == "invalid_input"
    assert ok["status"] == "active"


async def test_guidance_saved_over_mcp_is_only_proposed(
    engine: Engine, alpha: ProjectBinding
) -> None:
    lesson = {
        "kind": "lesson",
        "summary": "Run the migrations test before touching the schema.",
        "applies_when": "changing SQL migrations",
    }
    async with mcp_client(engine, alpha) as client:
        receipt = structured(await client.call_tool("save", lesson))
        searched = structured(await client.call_tool("search", {"query": "migrations schema"}))
    assert receipt["status"] == "proposed"
    assert searched["count"] == 0  # not believed until the owner approves it
    owner_dispatch(engine, "review.approve", {"id": receipt["judgment_id"]})
    async with mcp_client(engine, alpha) as client:
        approved = structured(await client.call_tool("search", {"query": "migrations schema"}))
    assert [r["id"] for r in approved["results"]] == [receipt["judgment_id"]]


async def test_search_refusals(engine: Engine, alpha: ProjectBinding) -> None:
    async with mcp_client(engine, alpha) as client:
        foreign = await client.call_tool("search", {"query": "x", "scopes": ["project:beta"]})
        owner_only = await client.call_tool("search", {"query": "x", "statuses": ["proposed"]})
        bad_limit = await client.call_tool("search", {"query": "x", "limit": 0})
    assert error_code(foreign) == "scope_denied"
    assert error_code(owner_only) == "not_granted"
    assert error_code(bad_limit) == "invalid_input"


async def test_get_refusals(engine: Engine, alpha: ProjectBinding) -> None:
    other = owner_dispatch(engine, "memory.save", {**DECISION, "scopes": ["project:beta"]})
    async with mcp_client(engine, alpha) as client:
        missing = await client.call_tool("get", {"id": 999})
        foreign = await client.call_tool("get", {"id": other["judgment_id"]})
        bad = await client.call_tool("get", {"id": "one"})
    assert error_code(missing) == "not_found"
    assert error_code(foreign) == "not_found"  # another project's row looks absent
    assert error_code(bad) == "invalid_input"


async def test_update_outcome(engine: Engine, alpha: ProjectBinding) -> None:
    async with mcp_client(engine, alpha) as client:
        saved = structured(await client.call_tool("save", DECISION))
        done = structured(
            await client.call_tool(
                "update_outcome",
                {"id": saved["judgment_id"], "outcome": "Worked; no corruption in a year."},
            )
        )
        record = structured(await client.call_tool("get", {"id": saved["judgment_id"]}))
        missing = await client.call_tool("update_outcome", {"id": 999, "outcome": "x"})
        empty = await client.call_tool(
            "update_outcome", {"id": saved["judgment_id"], "outcome": ""}
        )
    assert done["action"] == "memory.update_outcome"
    assert record["record"]["outcome"] == "Worked; no corruption in a year."
    assert record["record"]["status"] == "active"
    assert error_code(missing) == "not_found"
    assert error_code(empty) == "invalid_input"


async def test_retire_needs_a_reason_and_stops_belief(
    engine: Engine, alpha: ProjectBinding
) -> None:
    async with mcp_client(engine, alpha) as client:
        saved = structured(await client.call_tool("save", DECISION))
        no_reason = await client.call_tool("retire", {"id": saved["judgment_id"]})
        before = structured(await client.call_tool("search", {"query": "SQLCipher"}))
        retired = structured(
            await client.call_tool(
                "retire", {"id": saved["judgment_id"], "reason": "We moved to Postgres."}
            )
        )
        after = structured(await client.call_tool("search", {"query": "SQLCipher"}))
        again = await client.call_tool("retire", {"id": saved["judgment_id"], "reason": "twice"})
    assert error_code(no_reason) == "invalid_input"
    assert before["count"] == 1  # positive control
    assert retired["status"] == "stale"
    assert after["count"] == 0
    assert error_code(again) == "invalid_transition"


async def test_link(engine: Engine, alpha: ProjectBinding) -> None:
    async with mcp_client(engine, alpha) as client:
        first = structured(await client.call_tool("save", DECISION))
        second = structured(
            await client.call_tool(
                "save", {"kind": "fact", "summary": "SQLCipher 4 uses 4096-byte pages."}
            )
        )
        linked = structured(
            await client.call_tool(
                "link",
                {"src": second["judgment_id"], "dst": first["judgment_id"], "kind": "builds_on"},
            )
        )
        same = await client.call_tool(
            "link",
            {"src": first["judgment_id"], "dst": first["judgment_id"], "kind": "refines"},
        )
        unknown_kind = await client.call_tool(
            "link", {"src": second["judgment_id"], "dst": first["judgment_id"], "kind": "likes"}
        )
    assert linked["action"] == "memory.link"
    assert error_code(same) == "invalid_input"
    assert error_code(unknown_kind) == "invalid_input"


async def test_timeline_shows_what_was_believed(engine: Engine, alpha: ProjectBinding) -> None:
    async with mcp_client(engine, alpha) as client:
        saved = structured(await client.call_tool("save", DECISION))
        between = datetime.now(UTC).isoformat()
        structured(
            await client.call_tool(
                "retire", {"id": saved["judgment_id"], "reason": "We moved to Postgres."}
            )
        )
        then = structured(await client.call_tool("timeline", {"as_recorded_at": between}))
        now = structured(await client.call_tool("timeline", {}))
        foreign = await client.call_tool("timeline", {"scopes": ["project:beta"]})
    then_ids = [r["id"] for r in then["records"]]
    assert saved["judgment_id"] in then_ids
    assert saved["judgment_id"] not in [r["id"] for r in now["records"]]
    assert error_code(foreign) == "scope_denied"


async def test_checkpoints(engine: Engine, alpha: ProjectBinding) -> None:
    async with mcp_client(engine, alpha) as client:
        nothing = structured(await client.call_tool("checkpoint_load", {}))
        structured(await client.call_tool("checkpoint_save", {"summary": "Parser half done."}))
        structured(
            await client.call_tool(
                "checkpoint_save",
                {"summary": "Parser done; tests next.", "state": {"next": ["write tests"]}},
            )
        )
        latest = structured(await client.call_tool("checkpoint_load", {}))
        foreign = await client.call_tool(
            "checkpoint_save", {"summary": "x", "scope": "project:beta"}
        )
        global_scope = await client.call_tool(
            "checkpoint_save", {"summary": "x", "scope": "global"}
        )
        with_args = await client.call_tool("checkpoint_load", {"scope": "project:beta"})
        empty = await client.call_tool("checkpoint_save", {"summary": ""})
    assert nothing == {"checkpoint": None}
    assert latest["checkpoint"]["summary"] == "Parser done; tests next."
    assert latest["checkpoint"]["state"] == {"next": ["write tests"]}
    assert latest["checkpoint"]["scope"] == "project:alpha"
    assert error_code(foreign) == "scope_denied"
    assert error_code(global_scope) == "scope_denied"
    assert error_code(with_args) == "invalid_input"
    assert error_code(empty) == "invalid_input"


async def test_allow_global_adds_only_global(engine: Engine) -> None:
    binding = ProjectBinding("alpha", allow_global=True)
    async with mcp_client(engine, binding) as client:
        in_global = structured(await client.call_tool("save", {**DECISION, "scopes": ["global"]}))
        default = structured(await client.call_tool("save", DECISION))
        foreign = await client.call_tool("save", {**DECISION, "scopes": ["project:beta"]})
    record = owner_dispatch(engine, "memory.read", {"id": in_global["judgment_id"]})
    assert record["record"]["scopes"] == ["global"]
    record = owner_dispatch(engine, "memory.read", {"id": default["judgment_id"]})
    assert record["record"]["scopes"] == ["project:alpha"]
    assert error_code(foreign) == "scope_denied"


async def test_unknown_tool_is_an_error_result(engine: Engine, alpha: ProjectBinding) -> None:
    async with mcp_client(engine, alpha) as client:
        unknown = await client.call_tool("purge", {"id": 1, "reason": "x"})
        still_fine = structured(await client.call_tool("checkpoint_load", {}))
    assert error_code(unknown) == "unknown_action"
    assert still_fine == {"checkpoint": None}


async def test_commitments_are_saved_proposed_and_listed_but_not_closed_over_mcp(
    engine: Engine, alpha: ProjectBinding
) -> None:
    owed = {"kind": "commitment", "summary": "Review the storage PR"}
    owed_to_owner = {
        "kind": "commitment",
        "summary": "Dana sends the schema",
        "commitment": {"owed_by": "Dana", "owed_to": "owner", "due": "2026-12-05T17:00:00Z"},
    }
    async with mcp_client(engine, alpha) as client:
        mine = structured(await client.call_tool("save", owed))
        theirs = structured(await client.call_tool("save", owed_to_owner))
        listed = structured(await client.call_tool("commitments", {}))
        close = await client.call_tool("commitment.close", {"id": theirs["judgment_id"]})
    assert mine["status"] == "proposed" and theirs["status"] == "active"
    assert [(c["id"], c["status"]) for c in listed["commitments"]] == [
        (theirs["judgment_id"], "active"),
        (mine["judgment_id"], "proposed"),
    ]
    assert listed["commitments"][0]["scopes"] == ["project:alpha"]
    assert error_code(close) == "unknown_action"  # not offered over MCP
