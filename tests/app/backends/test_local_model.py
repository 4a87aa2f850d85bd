"""The local GGUF chat backend: without a configured model the owner is told what to do."""

from __future__ import annotations

import asyncio
from pathlib import Path

from app.backends.local_model import LocalModelBackend
from app.runtime.mailbox import InputKind, NewInput
from app.runtime.owner_runtime import OwnerRuntime, RuntimeSettings
from mama_core.memory import Engine
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
