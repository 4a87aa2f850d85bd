"""One owner runtime per data folder, with its Telegram gateway: what ``mama daemon``
and the tray app both run.

``RuntimeHost`` builds the configured agent backend, the runtime and — when a
bot token is configured — the gateway over an engine and store that are already
open, and tears them down in the reverse order. A lock file in the data folder
makes sure only one process serves a memory: two would answer the owner twice
and fight over Telegram's update queue. Pausing the agent is kept in the store,
so a pause set in the tray also holds for a daemon started later, and after a
restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from filelock import FileLock, Timeout

from app.backends.factory import backend_problem, make_backend
from app.durable.connector_store import ConnectorStore, Health
from app.durable.desk import announce_desk_server, withdraw_desk_server
from app.durable.schema import open_runtime_db
from app.durable.transaction import RuntimeDb
from app.local.paths import Paths
from app.local.settings import ConnectorConfig, Settings, SettingsError
from app.runtime.connectors import ConnectorScheduler
from app.runtime.context import ContextSettings
from app.runtime.owner_runtime import OwnerRuntime, RuntimeSettings
from app.runtime.prompts import load_prompt
from app.runtime.schedule import BriefSchedule, BriefScheduler
from app.telegram.config import api_url, telegram_token
from mama_core.errors import MamaError
from mama_core.memory import Engine
from mama_core.store import Store

if TYPE_CHECKING:
    from app.telegram.gateway import TelegramGateway
    from app.telegram.pairing import PairedOwner

log = logging.getLogger(__name__)

LOCK_FILE_NAME = "runtime.lock"


def runtime_running(paths: Paths) -> bool:
    """Whether a process (the tray app or ``mama daemon``) serves this data folder now.

    It probes the lock by taking and releasing it at once, so a server starting in
    that same instant could be refused; ``mama doctor`` is the only caller."""
    probe = FileLock(paths.home / LOCK_FILE_NAME, thread_local=False, blocking=False)
    try:
        probe.acquire()
    except Timeout:
        return True
    probe.release()
    return False


def runtime_lock(paths: Paths) -> FileLock:
    """The data folder's runtime lock (not taken): whoever holds it runs the agent."""
    return FileLock(paths.home / LOCK_FILE_NAME, thread_local=False, blocking=False)


def make_runtime(
    paths: Paths,
    settings: Settings,
    engine: Engine,
    store: Store,
    db: RuntimeDb,
    runtime_settings: RuntimeSettings | None = None,
) -> OwnerRuntime:
    """The owner runtime with the configured backend, not started (the tray, the
    daemon and a desk turn run by ``mama ask`` itself build it the same way)."""
    backend = make_backend(
        settings.agent_backend,
        paths.home,
        db,
        load_prompt(),
        local_model=settings.local_model_path,
    )
    scopes = tuple(dict.fromkeys(settings.agent_scopes))
    chosen = runtime_settings or RuntimeSettings(
        agent_scopes=scopes,
        default_scope=scopes[0],
        context=ContextSettings(guidance_budget_tokens=settings.guidance_budget_tokens),
    )
    runtime = OwnerRuntime(engine, store, backend, chosen, db=db)
    # Known before the first turn (a CLI not installed): the tray says so at once.
    runtime.backend_problem = backend_problem(backend)
    return runtime


class RuntimeBusyError(MamaError):
    """Another MAMA process already serves this memory's agent and Telegram bot."""

    code = "runtime_busy"
    exit_code = 53


@dataclass(frozen=True)
class HostStatus:
    """What the tray shows about the agent and the messenger."""

    backend: str
    telegram: str
    """"off (no bot token)", "connecting…", "connected as @name", or what went wrong."""
    owner: str | None
    """The paired Telegram owner (``@name``), or None."""
    paused: bool
    waiting: int = 0
    """Inputs in the mailbox not yet answered (held while paused, or due for a retry)."""
    backend_problem: str | None = None
    tools_problem: str | None = None
    """The last turn ran without the agent's tools and waits for its retry."""
    """Why the agent backend could not run at its last try (a CLI missing, say)."""
    telegram_problem: str | None = None
    """Why Telegram cannot be used (the token was refused)."""
    connectors: tuple[Health, ...] = ()
    """Each connector's health (last poll, items, error), for the status line."""

    @property
    def problem(self) -> str | None:
        """What keeps the agent, Telegram or a source from working, for the tray's trouble
        state. A connector counts only when the owner must act (``blocked``, or a channel,
        folder or board of it that cannot be read while the rest is): one that is
        retrying after a network error mends itself and only shows in the status line."""
        blocked = next((h for h in self.connectors if h.state == "blocked"), None)
        partly = next((h for h in self.connectors if h.parts), None)
        source = None
        if blocked is not None:
            source = f"The source {blocked.name} needs you: {blocked.last_error}"
        elif partly is not None:
            parts = "; ".join(f"{p.part}: {p.message}" for p in partly.parts)
            source = f"The source {partly.name} cannot read {parts}"
        return self.backend_problem or self.telegram_problem or source


class RuntimeHost:
    """Starts and stops the owner runtime (and Telegram) over an open memory."""

    def __init__(
        self,
        paths: Paths,
        settings: Settings,
        engine: Engine,
        store: Store,
        *,
        token: str | None = None,
        bot_api_url: str | None = None,
        runtime_settings: RuntimeSettings | None = None,
    ) -> None:
        self.paths = paths
        self.settings = settings
        self.engine = engine
        self.store = store
        self._token = token
        self._api_url = bot_api_url
        self._runtime_settings = runtime_settings
        self.runtime: OwnerRuntime | None = None
        self.gateway: TelegramGateway | None = None
        self.connectors: ConnectorScheduler | None = None
        self.briefs: BriefScheduler | None = None
        self._db: RuntimeDb | None = None
        self._connector_configs: tuple[ConnectorConfig, ...] = settings.connectors
        self._settings_mtime: float | None = None
        self._lock = runtime_lock(paths)
        self.working_listeners: list[Callable[[bool], None]] = []
        """Called with True/False as a turn starts and ends (forwarded from the runtime)."""
        self.pause_listeners: list[Callable[[bool], None]] = []
        """Called with True/False when the agent pauses or resumes, from here or elsewhere."""
        self.connector_listeners: list[Callable[[str], None]] = []
        """Called with a connector's name when its health changed (items stored, a failure,
        a recovery), so the tray's status line follows the sources between turns."""

    async def start(self) -> None:
        """Take the lock, then start the runtime and (with a token) the gateway."""
        self.paths.home.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire()  # non-blocking: an flock on a local file
        except Timeout:
            raise RuntimeBusyError(
                "Another MAMA (the tray app or `mama daemon`) already runs the agent for "
                f"{self.paths.home}; stop it first, or use that one."
            ) from None
        try:
            await self._start_locked()
        except BaseException:
            await self.stop()
            raise

    async def _start_locked(self) -> None:
        # Off the loop: a new SQLCipher connection may derive a key, and the keyring
        # may search its backends — either can take a noticeable moment.
        db = await asyncio.to_thread(open_runtime_db, self.store)
        self._db = db
        runtime = make_runtime(
            self.paths, self.settings, self.engine, self.store, db, self._runtime_settings
        )
        runtime.working_listeners.append(self._working)
        runtime.pause_listeners.append(self._paused)
        self.runtime = runtime
        await runtime.start()
        # From now on desk messages of other processes (``mama ask``) are answered here.
        await runtime.run_db(announce_desk_server, db, runtime.clock)
        scheduler = ConnectorScheduler(
            ConnectorStore(db, runtime.clock),
            self._current_connectors,
            runtime.run_db,
            on_stored=lambda _stored: runtime.wake(),
            on_health=self._connector_changed,
            clock=runtime.clock,
            watch_settings=True,
        )
        self.connectors = scheduler
        await scheduler.start()
        briefs = BriefScheduler(
            self.engine,
            BriefSchedule(db, runtime.mailbox, runtime.clock),
            runtime.run_db,
            on_posted=lambda _posted: runtime.wake(),
            clock=runtime.clock,
        )
        self.briefs = briefs
        await briefs.start()
        token = self._token if self._token is not None else await asyncio.to_thread(telegram_token)
        if token:
            from app.telegram.gateway import TelegramGateway

            self.gateway = TelegramGateway(runtime, self.engine, token, self._api_url or api_url())
            await self.gateway.start()
        else:
            log.warning("no Telegram bot token: messages wait in the mailbox")

    def _connector_changed(self, name: str) -> None:
        for listener in self.connector_listeners:
            listener(name)

    async def stop(self) -> None:
        """No new updates, then finish the turn's bookkeeping and any send in flight,
        then close the Telegram client; the lock is released last."""
        gateway, runtime, db = self.gateway, self.runtime, self._db
        scheduler, briefs = self.connectors, self.briefs
        self.gateway = self.runtime = self._db = self.connectors = self.briefs = None
        try:
            if briefs is not None:
                await briefs.stop()
            if scheduler is not None:
                await scheduler.stop()
            if gateway is not None:
                await gateway.stop_receiving()
            if runtime is not None:
                await runtime.stop()
            if gateway is not None:
                await gateway.stop()
        finally:
            if db is not None:
                with contextlib.suppress(MamaError):
                    await asyncio.to_thread(withdraw_desk_server, db)
                db.close()
            if self._lock.is_locked:
                self._lock.release()

    @property
    def running(self) -> bool:
        return self.runtime is not None

    # --- what the tray asks for -----------------------------------------

    async def set_paused(self, paused: bool) -> None:
        """Pause or resume the agent, now and across restarts."""
        await self._need_runtime().set_paused(paused)

    async def new_pair_code(self) -> str:
        """A one-time code for ``/pair`` (the same the CLI's ``telegram pair-code`` gives)."""
        from app.telegram.pairing import Pairing

        runtime = self._need_runtime()
        return await runtime.run_db(Pairing(runtime.db, runtime.clock).new_code)

    async def unpair_telegram(self) -> PairedOwner | None:
        """Unpair the Telegram chat (the owner's choice in the tray) and tell it so."""
        if self.gateway is not None:
            return await self.gateway.unpair()
        from app.telegram.pairing import Pairing

        runtime = self._need_runtime()
        return await runtime.run_db(Pairing(runtime.db, runtime.clock).unpair)

    async def paired_owner(self) -> PairedOwner | None:
        from app.telegram.pairing import Pairing

        runtime = self._need_runtime()
        return await runtime.run_db(Pairing(runtime.db, runtime.clock).owner)

    async def status(self) -> HostStatus:
        runtime = self._need_runtime()
        owner = await self.paired_owner()
        counts = await runtime.run_db(runtime.mailbox.counts)
        health = await runtime.run_db(self.connectors.store.all_health) if self.connectors else []
        return HostStatus(
            backend=runtime.backend.name,
            telegram=self._telegram_state(),
            owner=f"@{owner.username}" if owner and owner.username else None,
            paused=runtime.paused,
            waiting=counts.get("pending", 0),
            backend_problem=runtime.backend_problem,
            tools_problem=runtime.tools_problem,
            telegram_problem=self.gateway.fatal if self.gateway else None,
            connectors=tuple(health),
        )

    def _current_connectors(self) -> tuple[ConnectorConfig, ...]:
        """The connectors in settings.json as it is now (``mama connectors add/remove``
        from another process takes effect without a restart), read again when it changes."""
        path = self.paths.settings
        try:
            mtime = path.stat().st_mtime
        except OSError:
            return self._connector_configs
        if mtime != self._settings_mtime:
            self._settings_mtime = mtime
            try:
                self._connector_configs = Settings.load(path).connectors
            except SettingsError as exc:
                log.warning("connectors unchanged: %s", exc)
        return self._connector_configs

    def _telegram_state(self) -> str:
        gateway = self.gateway
        if gateway is None:
            return "off (no bot token)"
        if gateway.fatal:
            return gateway.fatal
        if gateway.connected.is_set():
            return f"connected as @{gateway.app.bot.username}"
        return "connecting…"

    def _need_runtime(self) -> OwnerRuntime:
        if self.runtime is None:
            raise RuntimeError("the runtime is not running")
        return self.runtime

    def _working(self, working: bool) -> None:
        for listener in list(self.working_listeners):
            listener(working)

    def _paused(self, paused: bool) -> None:
        for listener in list(self.pause_listeners):
            listener(paused)
