"""The whole messenger stack for a test: fake Bot API ↔ real PTB ↔ gateway ↔ runtime."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from app.runtime.owner_runtime import OwnerRuntime, RuntimeSettings
from app.telegram.gateway import TelegramGateway
from mama_core.memory import Engine
from mama_core.store import Store
from tests.app.runtime.support import Signal
from tests.app.telegram.fake_bot_api import FakeBotApi

OWNER_CHAT = 4242
OWNER_USER = 77
STRANGER = 666

FAST = RuntimeSettings(poll_seconds=5.0, send_retry_delays=(0.05,), typing_every=0.2)


@dataclass
class Stack:
    api: FakeBotApi
    runtime: OwnerRuntime
    gateway: TelegramGateway
    turns: Signal

    async def pair(self) -> None:
        await self.pair_with(await self.runtime.run_db(self.gateway.pairing.new_code))

    async def pair_with(self, code: str) -> None:
        """The owner sends ``/pair CODE`` and is answered "Paired"."""
        self.api.push_message(OWNER_CHAT, OWNER_USER, f"/pair {code}")
        await self.api.signal.until(
            lambda: any("Paired" in t for t in self.api.texts_to(OWNER_CHAT))
        )

    async def owner_says(self, text: str) -> int:
        before = len(self.api.texts_to(OWNER_CHAT))
        message_id = self.api.push_message(OWNER_CHAT, OWNER_USER, text)
        await self.api.signal.until(lambda: len(self.api.texts_to(OWNER_CHAT)) > before)
        return message_id

    def last_to_owner(self) -> dict[str, Any]:
        return [m for m in self.api.sent if m["chat"]["id"] == OWNER_CHAT][-1]


@contextlib.asynccontextmanager
async def messenger(
    engine: Engine, store: Store, backend: Any, settings: RuntimeSettings = FAST
) -> AsyncIterator[Stack]:
    api = FakeBotApi()
    url = await api.start()
    runtime = OwnerRuntime(engine, store, backend, settings)
    turns = Signal()
    runtime.turn_listeners.append(lambda claimed, reply: turns.notify())
    gateway = TelegramGateway(runtime, engine, api.token, url, poll_timeout=2.0)
    await runtime.start()
    await gateway.start()
    try:
        await asyncio.wait_for(gateway.connected.wait(), 20)
        yield Stack(api, runtime, gateway, turns)
    finally:
        # Each step bounded: a shutdown that hangs fails the test with the
        # stacks of every task instead of stalling the whole run.
        for step in (gateway.stop, runtime.stop, api.stop):
            try:
                await asyncio.wait_for(step(), 30)
            except TimeoutError:
                for task in asyncio.all_tasks():
                    task.print_stack()
                raise AssertionError(f"{step.__qualname__} did not finish in 30 s") from None
