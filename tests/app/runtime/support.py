"""Shared test parts for the runtime, Telegram and backend tests: a hand-moved
clock, real stores and engines, a recording channel, and waiting without sleeps."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from app.backends.base import TurnReply, TurnRequest
from app.backends.toolbox import ToolBox, ToolSpec
from app.durable.transaction import RuntimeDb
from app.runtime.channel import DeliveryRetry, OutgoingMessage
from mama_core.embeddings import Embedder, load_embedder
from mama_core.memory import Engine, EngineConfig
from mama_core.store import DbKey, Store
from tests.conftest import TEST_KEY_HEX


class ManualClock:
    """A clock that moves only when the test says so."""

    def __init__(self, start: datetime | None = None) -> None:
        self.current = start or datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self.current

    def advance(self, delta: timedelta) -> None:
        self.current += delta


class Signal:
    """An asyncio condition to wait on: ``await signal.until(pred)`` re-checks
    ``pred`` each time ``notify()`` is called, failing after ``timeout``."""

    def __init__(self) -> None:
        self._cond: asyncio.Condition | None = None
        # The loop keeps only weak references to tasks: without these, a wake-up
        # task could be collected mid-flight, holding the condition's lock.
        self._wakers: set[asyncio.Task[None]] = set()

    def _condition(self) -> asyncio.Condition:
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    def notify(self) -> None:
        cond = self._condition()

        async def wake() -> None:
            async with cond:
                cond.notify_all()

        task = asyncio.get_running_loop().create_task(wake())
        self._wakers.add(task)
        task.add_done_callback(self._wakers.discard)

    def notify_threadsafe(self, loop: asyncio.AbstractEventLoop) -> None:
        loop.call_soon_threadsafe(self.notify)

    async def until(self, predicate: Callable[[], bool], timeout: float = 20.0) -> None:
        cond = self._condition()

        async def wait() -> None:
            async with cond:
                await cond.wait_for(predicate)

        # The timeout covers taking the lock too, not only the wait.
        await asyncio.wait_for(wait(), timeout)


class RecordingChannel:
    """A channel at the transport edge: records what it is asked to send and can
    fail the first ``fail_first`` sends as "surely not delivered"."""

    def __init__(self, fail_first: int = 0) -> None:
        self.sent: list[OutgoingMessage] = []
        self.typing_calls = 0
        self.fail_first = fail_first
        self.failures = 0
        self.signal = Signal()

    def ready(self) -> bool:
        return True

    def split(self, message: OutgoingMessage) -> list[Any]:
        return [message]

    async def send_part(self, part: Any) -> str:
        if self.failures < self.fail_first:
            self.failures += 1
            self.signal.notify()
            raise DeliveryRetry("offline", after=0.01)
        self.sent.append(part)
        self.signal.notify()
        return f"rec:{len(self.sent)}"

    async def typing(self) -> None:
        self.typing_calls += 1


class ScriptedAgent:
    """Plays the model at the edge: each turn runs the next scripted tool calls
    through the real toolbox, then answers (with ``reply`` if given)."""

    name = "scripted-agent"
    speaks_for_owner = False
    writes_briefs = True
    version = "1.0"

    def __init__(
        self, script: list[list[tuple[str, dict[str, Any]]] | Exception], reply: str | None = None
    ) -> None:
        self.script = script
        self.reply = reply
        self.prompts: list[str] = []
        self.outcomes: list[list[Any]] = []

    @property
    def wants_session_context(self) -> bool:
        return not self.prompts

    async def start(self, tools: list[ToolSpec]) -> None:
        return None

    async def close(self) -> None:
        return None

    async def forget_session(self) -> list[Path]:
        return []

    async def run_turn(self, request: TurnRequest, tools: ToolBox) -> TurnReply:
        self.prompts.append(request.prompt)
        step = self.script.pop(0)
        if isinstance(step, Exception):
            raise step
        results = [await tools.call(name, args) for name, args in step]
        self.outcomes.append(results)
        if self.reply is not None:
            return TurnReply(self.reply)
        return TurnReply("; ".join(("error " if r.is_error else "ok ") + r.tool for r in results))


# --- fixtures (imported by each test folder's conftest) ---------------------


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture(scope="session")
def embedder(model_cache_dir: Path) -> Embedder:
    return load_embedder(None, model_cache_dir)


@pytest.fixture
def store(db_path: Path, db_key: DbKey) -> Iterator[Store]:
    with Store.open(db_path, db_key) as opened:
        yield opened


@pytest.fixture
def engine(store: Store, embedder: Embedder) -> Iterator[Engine]:
    with Engine(store, embedder, EngineConfig()) as opened:
        yield opened


@pytest.fixture
def runtime_db(store: Store) -> Iterator[RuntimeDb]:
    db = RuntimeDb(store.new_connection(), store.path)
    yield db
    db.close()


MAMA = Path(sys.executable).with_name("mama")
"""The installed ``mama`` command, for tests that run it as a subprocess."""


def mama_env(home: Path, cache: Path, **extra: str) -> dict[str, str]:
    """The environment for a ``mama`` subprocess over ``home`` with the test key, no
    keyring (unless the test says otherwise) and the shared model cache."""
    return {
        **os.environ,
        "MAMA_HOME": str(home),
        "MAMA_DB_KEY": TEST_KEY_HEX,
        "MAMA_CACHE_DIR": str(cache),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        **extra,
    }
