"""Proposals from a source through the REAL ``codex app-server`` against a scripted
fake Responses API: the poll's items reach Codex with their refs and the instruction
to propose what is worth keeping; its save lands proposed with the ref it cites, and
a ref outside the turn's scopes comes back to it as a clear refusal."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from app.backends.codex import CodexBackend, CodexSettings
from app.durable.connector_store import ConnectorStore
from app.durable.transaction import RuntimeDb
from app.runtime.owner_runtime import OwnerRuntime, RuntimeSettings
from app.runtime.prompts import load_prompt
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.store import Store
from tests.app.backends.fake_openai import (
    FakeResponses,
    function_call,
    function_outputs,
    message,
    user_texts,
)
from tests.app.backends.test_codex import codex_env, provider
from tests.app.connectors.items import batch, item
from tests.app.runtime.support import RecordingChannel

pytestmark = pytest.mark.slow

OPS = "channel:slack/#ops"
BOARD = "channel:slack/#board"


def observe_elsewhere(store: Store) -> int:
    """An item of #board as its connector kept it (on a connection of its own)."""
    conn = store.new_connection()
    try:
        oid = int(
            conn.execute(
                "INSERT INTO observations (source, external_id, author, text, received_at) "
                "VALUES ('slack:T1', 'B1/1', 'ceo', 'Board: minutes', "
                "'2026-11-30T09:00:00.000000Z')"
            ).lastrowid
            or 0
        )
        conn.execute(
            "INSERT INTO observation_facets (observation_id, channel, scope, metadata) "
            "VALUES (?, '#board', ?, '{}')",
            (oid, BOARD),
        )
    finally:
        conn.close()
    return oid


def test_codex_proposes_from_a_poll_with_its_refs(
    engine: Engine, store: Store, codex_bin: Path, tmp_path: Path
) -> None:
    foreign: list[str] = []

    def model(body: dict[str, Any]) -> list[dict[str, Any]]:
        digests = [t for t in user_texts(body) if "[New content from the connector" in t]
        said = digests[-1] if digests else ""
        shown = re.findall(r'ref="obs:(\d+)"', said)
        done = len(function_outputs(body))
        plan = [
            {
                "kind": "decision",
                "summary": "The cloud budget is capped at 12k a month until March",
                "evidence": [f"obs:{shown[0]}"] if shown else [],
            },
            {"kind": "fact", "summary": "The board meets monthly", "evidence": foreign},
        ]
        if shown and done < len(plan):
            return [function_call("memory_save", plan[done])]
        return [message("Proposed one decision for your review.")]

    fake = FakeResponses(model).start()
    channel = RecordingChannel()
    settings = RuntimeSettings(agent_scopes=("global", OPS, BOARD), default_scope="global")

    async def scenario() -> None:
        state = RuntimeDb(store.new_connection(), store.path)
        backend = CodexBackend(
            CodexSettings(
                executable=str(codex_bin),
                workdir=tmp_path / "agent",
                instructions=load_prompt(),
                config=provider(fake.url),
                env=codex_env(tmp_path),
                turn_timeout=120.0,
            ),
            state,
        )
        runtime = OwnerRuntime(engine, store, backend, settings)
        runtime.attach_channel(channel)
        await runtime.start()
        connector = ConnectorStore(runtime.db)
        try:
            # An item of another channel, kept earlier: not this turn's to cite.
            foreign.append(f"obs:{observe_elsewhere(store)}")
            post = item(2, channel="#ops", scope=OPS, text="Erik: budget capped at 12k/mo to March")
            await runtime.run_db(connector.store_batch, "work-slack", "slack", batch(post))
            runtime.wake()
            await channel.signal.until(
                lambda: any(m.review_id or m.review_group for m in channel.sent), timeout=120
            )
        finally:
            await runtime.stop()
            state.close()

    try:
        asyncio.run(scenario())
    finally:
        fake.stop()

    turn = next(r for r in reversed(fake.requests) if "Erik:" in "\n".join(user_texts(r)))
    prompt = "\n".join(user_texts(turn))
    assert "commitments" in prompt and '"evidence": ["obs:12"]' in prompt
    outputs = [json.dumps(o.get("output")) for o in function_outputs(turn)]
    assert len(outputs) == 2
    assert "proposed" in outputs[0]
    assert "not an item of this turn nor an observation in your scopes" in outputs[1]
    found = engine.dispatch(
        "memory.search",
        {"query": "cloud budget", "statuses": ["proposed"]},
        SessionFacts.owner_cli(),
        Grant.owner(),
    )["results"]
    (hit,) = found
    record = engine.dispatch(
        "memory.read", {"id": hit["id"]}, SessionFacts.owner_cli(), Grant.owner()
    )["record"]
    assert record["provenance"]["actor_name"] == "codex"
    assert [e["excerpt"] for e in record["evidence"]] == ["Erik: budget capped at 12k/mo to March"]
