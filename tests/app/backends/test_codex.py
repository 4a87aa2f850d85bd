"""The Codex backend with the REAL ``codex app-server`` (pinned, from npm) against a
scripted fake Responses API on 127.0.0.1; dynamic tools answered by our dispatcher."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from app.backends.codex import CodexBackend, CodexSettings
from app.backends.toolbox import agent_tools
from app.durable.mailbox import InputKind, NewInput
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
from tests.app.runtime.support import RecordingChannel
from tests.app.telegram.stack import OWNER_CHAT, OWNER_USER, messenger

pytestmark = pytest.mark.slow

GUIDANCE = {
    "kind": "lesson",
    "summary": "Check the staging logs before paging anyone",
    "applies_when": "an alert fires at night",
}


def codex_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "codex-home"
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    return {"HOME": str(home), "CODEX_HOME": str(home / ".codex"), "OPENAI_API_KEY": "not-real"}


def provider(url: str) -> tuple[str, ...]:
    return (
        'model_provider="fake"',
        'model="fake-model"',
        'model_providers.fake.name="Fake"',
        f'model_providers.fake.base_url="{url}/v1"',
        'model_providers.fake.wire_api="responses"',
        "model_providers.fake.request_max_retries=0",
        "model_providers.fake.stream_max_retries=0",
        "model_providers.fake.supports_websockets=false",
    )


def test_owner_message_through_codex_saves_a_proposal_that_arrives_with_buttons(
    engine: Engine, store: Store, codex_bin: Path, tmp_path: Path
) -> None:
    def model(body: dict[str, Any]) -> list[dict[str, Any]]:
        if function_outputs(body):
            return [message("Noted as a lesson, waiting for your review.")]
        if any("staging logs" in t for t in user_texts(body)):
            return [function_call("memory_save", GUIDANCE)]
        return [message("ok")]

    fake = FakeResponses(model).start()
    written: list[str] = []
    """The reply as Codex wrote it, item by item (the chat window's feed)."""

    async def scenario() -> CodexBackend:
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
        try:
            async with messenger(engine, store, backend) as s:
                await s.pair()
                s.runtime.text_listeners.append(lambda _input, text: written.append(text))
                s.api.push_message(
                    OWNER_CHAT, OWNER_USER, "Lesson: check the staging logs before paging anyone."
                )
                await s.api.signal.until(
                    lambda: (
                        any(m.get("reply_markup") for m in s.api.sent)
                        and any("Noted as a lesson" in t for t in s.api.texts_to(OWNER_CHAT))
                    ),
                    timeout=120,
                )
                card = next(m for m in s.api.sent if m.get("reply_markup"))
                jid = int(card["reply_markup"]["inline_keyboard"][0][0]["callback_data"][8:])
                card_message = {k: v for k, v in card.items() if k != "params"}
                s.api.push_callback(OWNER_USER, card_message, f"approve:{jid}")
                await s.api.signal.until(lambda: len(s.api.edits) == 1)
        finally:
            state.close()
        return backend

    try:
        backend = asyncio.run(scenario())
    finally:
        fake.stop()
    assert written[0] == "Noted as a lesson, waiting for your review."
    assert backend.tool_calls and backend.tool_calls[0]["tool"] == "memory_save"
    record = engine.dispatch("memory.read", {"id": 1}, SessionFacts.owner_cli(), Grant.owner())
    saved = record["record"]
    assert saved["summary"] == GUIDANCE["summary"] and saved["status"] == "active"
    assert saved["provenance"]["actor_name"] == "codex"
    assert saved["provenance"]["actor_version"] == "0.171.0"
    assert saved["provenance"]["turn"] == "owner_message"
    first = fake.requests[0]
    offered = {t.get("name") for t in first.get("tools", [])}
    assert "memory_save" in offered and "exec_command" not in offered
    # No built-in reach beyond our actions: no shell, no web search, no image tool.
    assert {t.get("type") for t in first.get("tools", [])} == {"function"}
    ours = {s.name for s in agent_tools(engine, Grant.agent(["global"], "global"))}
    assert offered - ours <= {"request_user_input"}
    assert not any("approve" in str(n) or "purge" in str(n) for n in offered)
    assert any("# Session context" in t for t in user_texts(first))


def test_the_pinned_codex_still_speaks_the_dynamic_tools_protocol(
    codex_bin: Path, tmp_path: Path
) -> None:
    """dynamicTools and item/tool/call are experimental: fail loudly if they move."""
    out = tmp_path / "schema"
    env = {**codex_env(tmp_path), "PATH": "/usr/bin:/bin"}
    subprocess.run(
        [str(codex_bin), "app-server", "generate-json-schema", "--experimental", "--out", str(out)],
        check=True,
        capture_output=True,
        env=env,
        timeout=120,
    )
    call = json.loads((out / "DynamicToolCallParams.json").read_text())
    assert {"tool", "arguments", "callId", "threadId", "turnId"} <= set(call["required"])
    answer = json.loads((out / "DynamicToolCallResponse.json").read_text())
    assert set(answer["required"]) == {"contentItems", "success"}
    start = json.loads((out / "v2" / "ThreadStartParams.json").read_text())
    assert "dynamicTools" in start["properties"]
    spec = start["definitions"]["DynamicToolSpec"]["oneOf"][0]
    assert set(spec["required"]) == {"description", "inputSchema", "name", "type"}
    requests = (out / "ServerRequest.json").read_text()
    assert '"item/tool/call"' in requests


def test_a_restarted_codex_resumes_its_thread_with_our_tools(
    engine: Engine, store: Store, codex_bin: Path, tmp_path: Path
) -> None:
    def model(body: dict[str, Any]) -> list[dict[str, Any]]:
        if function_outputs(body):
            return [message("Found it.")]
        if any("second" in t for t in user_texts(body)):
            return [function_call("memory_search", {"query": "anything"})]
        return [message("First.")]

    fake = FakeResponses(model).start()

    def backend(state: RuntimeDb) -> CodexBackend:
        return CodexBackend(
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

    async def scenario() -> tuple[str | None, str | None, list[str]]:
        state = RuntimeDb(store.new_connection(), store.path)
        channel = RecordingChannel()
        try:
            first = backend(state)
            runtime = OwnerRuntime(
                engine, store, first, RuntimeSettings(poll_seconds=5.0), db=state
            )
            runtime.attach_channel(channel)
            await runtime.start()
            await runtime.post(NewInput(InputKind.OWNER_MESSAGE, "telegram", "1:1", "first"))
            await channel.signal.until(lambda: len(channel.sent) == 1, timeout=120)
            await runtime.stop()  # the app stops; the thread id stays in the store

            second = backend(state)
            runtime = OwnerRuntime(
                engine, store, second, RuntimeSettings(poll_seconds=5.0), db=state
            )
            runtime.attach_channel(channel)
            await runtime.start()
            await runtime.post(NewInput(InputKind.OWNER_MESSAGE, "telegram", "1:2", "second"))
            await channel.signal.until(lambda: len(channel.sent) == 2, timeout=120)
            await runtime.stop()
            return first.thread_id, second.thread_id, [m.text for m in channel.sent]
        finally:
            state.close()

    try:
        first_thread, second_thread, said = asyncio.run(scenario())
    finally:
        fake.stop()
    assert first_thread is not None and first_thread == second_thread
    assert said == ["First.", "Found it."]
    resumed = fake.requests[-1]
    assert "memory_search" in {t.get("name") for t in resumed.get("tools", [])}
    assert any("first" in t for t in user_texts(resumed))  # the earlier turn is still there
