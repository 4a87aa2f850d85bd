"""The agent's tools (catalog, grant, idempotent reruns) and the bridge socket's
per-session token, over a real Unix socket."""

from __future__ import annotations

import asyncio
import json

import pytest

from app.backends.claude_relay import ClaudeRelay
from app.backends.claude_relay_process import RelayLink, RelayUnavailableError
from app.backends.toolbox import ToolBox, agent_tools
from mama_core.memory import ActorKind, Engine, Grant, SessionFacts, TurnKind

GRANT = Grant.agent(["global"], "global")
FACTS = SessionFacts(ActorKind.AGENT, "agent", turn=TurnKind.OWNER_MESSAGE)
FACT = {"kind": "fact", "summary": "The standup moved to 9:30"}


def test_tools_come_from_the_catalog_and_never_include_owner_verbs(engine: Engine) -> None:
    specs = agent_tools(engine, GRANT)
    names = {s.name for s in specs}
    assert {"memory_save", "memory_search", "memory_retire", "checkpoint_save"} <= names
    assert not names & {
        "review_approve",
        "review_reject",
        "memory_purge",
        "memory_tombstone",
        "tombstone_lift",
        "memory_restore",
    }
    save = next(s for s in specs if s.name == "memory_save")
    assert save.input_schema == engine.catalog.json_schema("memory.save")
    assert save.description == engine.catalog.actions["memory.save"].description


def test_a_rerun_of_the_same_input_replays_instead_of_saving_twice(engine: Engine) -> None:
    async def scenario() -> None:
        first = await ToolBox(engine, GRANT, FACTS, input_id=7).call("memory_save", FACT)
        rerun = await ToolBox(engine, GRANT, FACTS, input_id=7).call("memory_save", FACT)
        other = await ToolBox(engine, GRANT, FACTS, input_id=8).call("memory_save", FACT)
        assert not first.is_error and rerun.result["replayed"] is True
        assert rerun.result["judgment_id"] == first.result["judgment_id"]
        assert other.result["judgment_id"] != first.result["judgment_id"]  # positive control

        unknown = await ToolBox(engine, GRANT, FACTS, 9).call("review_approve", {"id": 1})
        assert unknown.is_error and unknown.result["error"]["code"] == "unknown_tool"
        bad = await ToolBox(engine, GRANT, FACTS, 9).call("memory_save", ["not", "a", "dict"])
        assert bad.is_error and bad.result["error"]["code"] == "invalid_input"

    asyncio.run(scenario())


def test_the_bridge_socket_serves_only_the_session_token(engine: Engine) -> None:
    async def scenario() -> None:
        server = ClaudeRelay(agent_tools(engine, GRANT))
        await server.start()
        try:
            with pytest.raises(RelayUnavailableError):
                await RelayLink.connect(str(server.socket_path), "guessed-token")
            assert server.refused == 1

            link = await RelayLink.connect(str(server.socket_path), server.token)
            listed = await link.request("tools/list")
            assert "memory_save" in {t["name"] for t in listed["tools"]}
            idle = await link.request("tools/call", {"name": "memory_save", "arguments": FACT})
            assert idle["isError"] and "No turn" in idle["text"]

            server.toolbox = ToolBox(engine, GRANT, FACTS, input_id=1)
            saved = await link.request("tools/call", {"name": "memory_save", "arguments": FACT})
            assert not saved["isError"] and json.loads(saved["text"])["status"] == "active"
            link.close()
            assert oct(server.folder.stat().st_mode & 0o777) == "0o700"
        finally:
            await server.close()
        assert not server.folder.exists()

    asyncio.run(scenario())
