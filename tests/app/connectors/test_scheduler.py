"""The connector scheduler with an injected clock and wait: intervals, ``more``, backoff,
the owner's pause and a block until the owner changes the settings. No sleeps."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from app.connectors import kinds
from app.connectors.base import ConnectorError, Problem
from app.durable.connector_store import ConnectorStore, Stored
from app.durable.transaction import RuntimeDb
from app.local.settings import ConnectorConfig
from app.runtime.connectors import ConnectorScheduler, PollSettings
from tests.app.connectors import scripted
from tests.app.connectors.items import batch, item
from tests.app.runtime.support import ManualClock


@pytest.fixture(autouse=True)
def scripted_kind(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(kinds.KINDS, "scripted", "tests.app.connectors.scripted")
    scripted.SCRIPTS.clear()
    scripted.POLLS.clear()
    yield
    scripted.SCRIPTS.clear()
    scripted.POLLS.clear()


class Waits:
    """The scheduler's wait: records each delay; the ``stop_after``-th never returns."""

    def __init__(self, stop_after: int) -> None:
        self.delays: list[float] = []
        self.stop_after = stop_after
        self.reached = asyncio.Event()
        self.on_wait: Callable[[int], None] = lambda _n: None

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        self.on_wait(len(self.delays))
        if len(self.delays) >= self.stop_after:
            self.reached.set()
            await asyncio.Event().wait()  # parked until the scheduler stops


def run(
    db: RuntimeDb,
    clock: ManualClock,
    configs: Callable[[], tuple[ConnectorConfig, ...]],
    waits: Waits,
    on_health: Callable[[str], None] = lambda _n: None,
) -> tuple[list[Stored], ConnectorStore]:
    store = ConnectorStore(db, clock)
    stored: list[Stored] = []
    executor = ThreadPoolExecutor(1)

    async def run_db(fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(executor, lambda: fn(*args))

    async def scenario() -> None:
        scheduler = ConnectorScheduler(
            store,
            configs,
            run_db,
            on_stored=stored.append,
            on_health=on_health,
            clock=clock,
            wait=waits,
            settings=PollSettings(batch_limit=50, backoff_base_s=10, pause_check_s=5),
            rng=random.Random(7),
        )
        await scheduler.start()
        try:
            await asyncio.wait_for(waits.reached.wait(), 30)
        finally:
            await scheduler.stop()

    try:
        asyncio.run(scenario())
    finally:
        executor.shutdown()
    return stored, store


def config(name: str = "feed", **options: Any) -> ConnectorConfig:
    return ConnectorConfig(name=name, kind="scripted", interval_s=60, options=options)


def test_more_polls_again_at_once_then_the_interval(app_db: RuntimeDb, clock: ManualClock) -> None:
    scripted.SCRIPTS["feed"] = [
        batch(item(1), item(2), more=True),
        batch(item(3)),
    ]
    waits = Waits(stop_after=3)
    stored, store = run(app_db, clock, lambda: (config(),), waits)
    assert waits.delays == [0.0, 60.0, 60.0]
    assert [len(s.new_ids) for s in stored] == [2, 1]  # the third poll had nothing new
    # Each poll started from the cursor the previous batch stored.
    assert scripted.POLLS["feed"][:3] == [None, batch(item(2)).cursor, batch(item(3)).cursor]
    health = store.health("feed")
    assert health is not None and health.state == "ok" and health.items_stored == 3


def test_failures_back_off_with_jitter_and_honour_retry_after(
    app_db: RuntimeDb, clock: ManualClock
) -> None:
    scripted.SCRIPTS["feed"] = [
        ConnectorError(Problem.UNAVAILABLE, "Trello is having trouble (502)."),
        ConnectorError(Problem.UNAVAILABLE, "Trello is having trouble (502)."),
        ConnectorError(Problem.RATE_LIMITED, "slow down", retry_after=300),
        batch(item(1)),
    ]
    waits = Waits(stop_after=4)
    stored, store = run(app_db, clock, lambda: (config(),), waits)
    first, second, third, after = waits.delays
    assert 5 <= first <= 10 and 10 <= second <= 20  # base 10: half the ceiling plus jitter
    assert third >= 300  # never sooner than the source asked
    assert after == 60.0  # success: back to the interval
    health = store.health("feed")
    assert health is not None and health.state == "ok" and health.failures == 0
    assert len(stored) == 1


def test_a_problem_the_owner_must_fix_blocks_until_the_settings_change(
    app_db: RuntimeDb, clock: ManualClock
) -> None:
    scripted.SCRIPTS["feed"] = [
        ConnectorError(Problem.AUTH, "Trello refused the API key or token (401): set them again."),
        batch(item(1)),
    ]
    current = {"config": config(token_version=1)}
    waits = Waits(stop_after=5)

    def on_wait(n: int) -> None:
        if n == 4:  # the owner fixes the settings while it waits
            current["config"] = config(token_version=2)

    waits.on_wait = on_wait
    stored, store = run(app_db, clock, lambda: (current["config"],), waits)
    # One failed poll, then waiting (no polls) until the settings changed, then a poll.
    assert waits.delays == [5, 5, 5, 5, 60]
    assert len(scripted.POLLS["feed"]) == 2
    assert len(stored) == 1
    health = store.health("feed")
    assert health is not None and health.state == "ok"


def test_blocked_health_names_the_problem(app_db: RuntimeDb, clock: ManualClock) -> None:
    scripted.SCRIPTS["feed"] = [ConnectorError(Problem.NOT_FOUND, "No Trello board 'Gone'.")]
    waits = Waits(stop_after=3)
    _stored, store = run(app_db, clock, lambda: (config(),), waits)
    health = store.health("feed")
    assert health is not None
    assert (health.state, health.last_error_code) == ("blocked", "not_found")
    assert "No Trello board 'Gone'." in health.line()
    assert len(scripted.POLLS["feed"]) == 1  # not retried: only the owner can fix it


def test_the_owners_pause_holds_and_resume_polls_again(
    app_db: RuntimeDb, clock: ManualClock
) -> None:
    store = ConnectorStore(app_db, clock)
    store.set_paused("feed", "scripted", True)
    scripted.SCRIPTS["feed"] = [batch(item(1))]
    waits = Waits(stop_after=4)

    def on_wait(n: int) -> None:
        if n == 2:  # `mama connectors resume feed` from another process
            ConnectorStore(app_db, clock).set_paused("feed", "scripted", False)

    waits.on_wait = on_wait
    stored, store = run(app_db, clock, lambda: (config(),), waits)
    assert waits.delays[:2] == [5, 5]  # paused: looked, did not poll
    assert len(scripted.POLLS["feed"]) >= 1 and len(stored) == 1
    health = store.health("feed")
    assert health is not None and not health.owner_paused and health.items_stored == 1


def test_a_disabled_or_unknown_kind_is_not_polled(app_db: RuntimeDb, clock: ManualClock) -> None:
    disabled = ConnectorConfig(name="off", kind="scripted", enabled=False)
    unknown = ConnectorConfig(name="fax", kind="fax")
    run(app_db, clock, lambda: (disabled,), Waits(stop_after=2))
    assert "off" not in scripted.POLLS
    _stored, store = run(app_db, clock, lambda: (unknown,), Waits(stop_after=2))
    health = store.health("fax")
    assert health is not None and health.state == "blocked"
    assert health.last_error_code == "bad_config" and "no connector kind" in (
        health.last_error or ""
    )


def test_the_health_listener_hears_new_items_failures_and_the_recovery_not_quiet_polls(
    app_db: RuntimeDb, clock: ManualClock
) -> None:
    scripted.SCRIPTS["feed"] = [
        batch(item(1)),  # new items: the tray's count changes
        batch(),  # a quiet poll: nothing to tell
        ConnectorError(Problem.UNAVAILABLE, "Trello is having trouble (502)."),
        batch(),  # quiet, but it mended: the tray must drop "retrying"
        batch(),  # quiet again: nothing to tell
    ]
    heard: list[tuple[str, int]] = []  # (name, polls finished before)
    waits = Waits(stop_after=5)
    run(app_db, clock, lambda: (config(),), waits, lambda n: heard.append((n, len(waits.delays))))
    assert len(scripted.POLLS["feed"]) == 5
    # After poll 1 (items), poll 3 (a failure) and poll 4 (the recovery); polls 2
    # and 5 were quiet, so the tray is not redrawn every interval.
    assert heard == [("feed", 0), ("feed", 2), ("feed", 3)]
