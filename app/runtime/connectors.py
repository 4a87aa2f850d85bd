"""Polling the owner's connectors on the app's loop (the tray and ``mama daemon`` alike).

Each enabled connector has a task: poll from its stored cursor, store the batch
(observations, cursor and one source delta in one transaction:
``app.durable.connector_store``), wake the agent, and wait its interval — or
poll again at once when the source says it has more. A failure waits with
exponential backoff and jitter (at least the source's ``retry_after``); a
problem only the owner can fix (a bad token, a board that is gone, bad
settings) blocks the connector with its status until the owner changes its
settings or resumes it. The owner's pause (``mama connectors pause``, from any
process) is read from the store before every poll.

Time is injected (``clock`` and ``wait``), so tests drive it without sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from app.connectors.base import Connector, ConnectorError, PartProblem, Problem
from app.connectors.kinds import KindUnavailableError, SecretLookup, build_connector
from app.connectors.secrets import secrets_of
from app.durable.clock import Clock, SystemClock
from app.durable.connector_store import ConnectorStore, Stored
from app.local.settings import ConnectorConfig

log = logging.getLogger(__name__)

T = TypeVar("T")

RunDb = Callable[..., Awaitable[Any]]
Wait = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class PollSettings:
    batch_limit: int = 200
    """Items asked for per poll (a connector may return a few more or fewer)."""
    backoff_base_s: float = 5.0
    backoff_max_s: float = 900.0
    pause_check_s: float = 5.0
    """How often a paused or blocked connector looks whether the owner changed it."""


def settings_fingerprint(config: ConnectorConfig) -> str:
    """What identifies the owner's settings of a connector (a change unblocks it)."""
    data = {"kind": config.kind, "options": config.options}
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


def backoff_delay(
    failures: int,
    retry_after: float | None,
    settings: PollSettings,
    rng: random.Random,
) -> float:
    """Exponential backoff with full jitter, never shorter than ``retry_after``."""
    ceiling = min(settings.backoff_max_s, settings.backoff_base_s * 2 ** max(0, failures - 1))
    delay = ceiling / 2 + rng.uniform(0, ceiling / 2)
    return max(delay, retry_after or 0.0)


class ConnectorScheduler:
    """One polling task per enabled connector in ``configs()`` (read again each round)."""

    def __init__(
        self,
        store: ConnectorStore,
        configs: Callable[[], tuple[ConnectorConfig, ...]],
        run_db: RunDb,
        *,
        on_stored: Callable[[Stored], None] = lambda _s: None,
        on_health: Callable[[str], None] = lambda _n: None,
        secret_for: Callable[[str], SecretLookup] = secrets_of,
        clock: Clock | None = None,
        wait: Wait | None = None,
        settings: PollSettings | None = None,
        rng: random.Random | None = None,
        watch_settings: bool = False,
    ) -> None:
        self.store = store
        self.configs = configs
        self.run_db = run_db
        self.on_stored = on_stored
        self.on_health = on_health
        """Called with a connector's name when its health changed as the owner sees it:
        new items stored, a failure, or the first good poll after failures."""
        self._troubled: set[str] = set()
        self._broken_parts: dict[str, dict[str, PartProblem]] = {}
        self.secret_for = secret_for
        self.clock: Clock = clock or SystemClock()
        self.settings = settings or PollSettings()
        self.rng = rng or random.Random()
        self._wait = wait
        self._watch_settings = watch_settings
        self._stopping = asyncio.Event()
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._polls: dict[str, asyncio.Lock] = {}

    # --- life cycle -----------------------------------------------------

    async def start(self) -> None:
        """Start a task for each connector configured now."""
        for config in self.configs():
            self._start(config.name)
        if self._watch_settings:
            self._tasks[""] = asyncio.create_task(self._watch(), name="connector-settings")

    async def _watch(self) -> None:
        """Start a task for a connector added while running (another process's CLI)."""
        while not self._stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.settings.pause_check_s)
            for config in self.configs():
                self.ensure(config.name)

    def ensure(self, name: str) -> None:
        """Poll ``name`` too (a connector added while running); no-op if it runs."""
        if not self._stopping.is_set():
            self._start(name)

    def _start(self, name: str) -> None:
        if name not in self._tasks or self._tasks[name].done():
            self._tasks[name] = asyncio.create_task(self._run(name), name=f"connector-{name}")

    async def stop(self) -> None:
        self._stopping.set()
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()

    # --- one connector --------------------------------------------------

    def _config(self, name: str) -> ConnectorConfig | None:
        return next((c for c in self.configs() if c.name == name), None)

    async def _run(self, name: str) -> None:
        connector: Connector | None = None
        built_for: str | None = None
        try:
            while not self._stopping.is_set():
                config = self._config(name)
                if config is None:
                    return  # removed: its observations stay
                fingerprint = settings_fingerprint(config)
                if not config.enabled:
                    await self._sleep(self.settings.pause_check_s)
                    continue
                health = await self.run_db(self.store.health, name)
                if health is not None and health.owner_paused:
                    await self._sleep(self.settings.pause_check_s)
                    continue
                if health is not None and health.blocked_settings == fingerprint:
                    await self._sleep(self.settings.pause_check_s)
                    continue
                if connector is None or built_for != fingerprint:
                    if connector is not None:
                        await _close(connector)
                    connector, built_for = None, None
                    try:
                        connector = self._build(config)
                        built_for = fingerprint
                    except ConnectorError as exc:
                        await self._failed(config, exc, fingerprint)
                        continue
                delay = await self._poll(config, connector, fingerprint)
                await self._sleep(delay)
        finally:
            if connector is not None:
                await _close(connector)

    def _build(self, config: ConnectorConfig) -> Connector:
        try:
            return build_connector(
                config.kind, config.name, config.options, self.secret_for(config.name)
            )
        except KindUnavailableError as exc:
            raise ConnectorError(Problem.CONFIG, str(exc)) from None

    async def _poll(self, config: ConnectorConfig, connector: Connector, fingerprint: str) -> float:
        """One poll and its bookkeeping; the seconds to wait before the next one."""
        try:
            stored, more, problems = await self.poll_once(config, connector)
        except ConnectorError as exc:
            return await self._failed(config, exc, fingerprint)
        if stored.input_id is not None:
            self.on_stored(stored)
        broken = self._parts_changed(config.name, problems)
        if stored.input_id is not None or config.name in self._troubled or broken:
            self._troubled.discard(config.name)
            self._health_changed(config.name)
        return 0.0 if more else config.interval_s

    async def poll_once(
        self, config: ConnectorConfig, connector: Connector
    ) -> tuple[Stored, bool, tuple[PartProblem, ...]]:
        """Poll ``connector`` from its stored cursor and store the batch (one transaction):
        what was stored, whether the source has more, and the parts it could not read.

        Raises ConnectorError (an unexpected exception becomes ``unavailable``)."""
        lock = self._polls.setdefault(config.name, asyncio.Lock())
        async with lock:
            cursor = await self.run_db(self.store.cursor, config.name)
            try:
                batch = await connector.poll(cursor, self.settings.batch_limit)
            except ConnectorError:
                raise
            except Exception as exc:  # a bug in a connector: logged, not shown as a traceback
                log.exception("connector %s failed unexpectedly", config.name)
                raise ConnectorError(
                    Problem.UNAVAILABLE, f"unexpected error in the connector: {type(exc).__name__}"
                ) from exc
            stored = await self.run_db(self.store.store_batch, config.name, config.kind, batch)
            return stored, batch.more, batch.problems

    def _parts_changed(self, name: str, problems: tuple[PartProblem, ...]) -> bool:
        """Log a part that broke or mended; True when the set of broken parts changed."""
        now = {p.part: p for p in problems}
        before = self._broken_parts.get(name, {})
        for part, problem in now.items():
            if part not in before:
                log.warning(
                    "connector %s cannot read %s (%s): %s; its other parts go on",
                    name,
                    part,
                    problem.problem.value,
                    problem.message,
                )
        for part in before.keys() - now.keys():
            log.info("connector %s reads %s again", name, part)
        self._broken_parts[name] = now
        return before.keys() != now.keys()

    async def _failed(
        self, config: ConnectorConfig, exc: ConnectorError, fingerprint: str
    ) -> float:
        message = str(exc).splitlines()[0] if str(exc) else exc.problem.value
        delay = await self._record(config, exc, message, fingerprint)
        self._troubled.add(config.name)
        self._health_changed(config.name)
        return delay

    async def _record(
        self, config: ConnectorConfig, exc: ConnectorError, message: str, fingerprint: str
    ) -> float:
        """Store the failure in the connector's health; the seconds to wait."""
        if exc.owner_must_act:
            log.warning("connector %s needs the owner: %s", config.name, message)
            await self.run_db(
                _record_failure,
                self.store,
                config,
                exc.problem.value,
                message,
                None,
                fingerprint,
            )
            return self.settings.pause_check_s
        failures = await self.run_db(
            _record_failure, self.store, config, exc.problem.value, message, None, None
        )
        delay = backoff_delay(failures, exc.retry_after, self.settings, self.rng)
        await self.run_db(
            self.store.set_next_poll,
            config.name,
            config.kind,
            self.clock.now() + timedelta(seconds=delay),
        )
        log.info("connector %s failed (%s); next try in %.0f s", config.name, message, delay)
        return delay

    def _health_changed(self, name: str) -> None:
        """Tell the listener; its failure is logged, never stops the polling."""
        try:
            self.on_health(name)
        except Exception:
            log.exception("connector health listener failed for %s", name)

    async def _sleep(self, seconds: float) -> None:
        if self._wait is not None:
            await self._wait(seconds)
            return
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)


def _record_failure(
    store: ConnectorStore,
    config: ConnectorConfig,
    code: str,
    message: str,
    next_poll_at: Any,
    blocked: str | None,
) -> int:
    return store.record_failure(
        config.name, config.kind, code, message, next_poll_at=next_poll_at, blocked_settings=blocked
    )


async def _close(connector: Connector) -> None:
    with contextlib.suppress(Exception):
        await connector.aclose()
