"""The owner runtime on one asyncio loop: one agent turn at a time, replies journalled
and sent, proposals turned into review cards.

Four tasks share the loop: the *worker* claims the next input (owner messages
first), runs one turn through the backend with a toolbox bound to that turn's
session facts, and completes the input with its reply in one transaction; the
*sender* takes the journal to the channel; the *poller* wakes both now and
then (due retries); the *pause follower* rereads the pause flag whenever another
connection commits (``mama agent pause``). Commits of other processes arrive as
the engine's change-sets too, so their proposals become cards at once. SQL runs
on one dedicated thread, the engine's writes on the engine's writer thread, so the
loop never blocks on the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from app.backends.base import (
    AgentBackend,
    BackendError,
    BackendUnavailableError,
    ToolsUnreachableError,
    TurnReply,
    TurnRequest,
)
from app.backends.command_mode import CommandModeBackend
from app.backends.toolbox import ToolBox, agent_tools
from app.durable.clock import Clock, SystemClock
from app.durable.connector_store import (
    AUTHORS_KEY,
    CHANNELS_KEY,
    CONNECTOR_KEY,
    delta_observations,
)
from app.durable.evidence import content_scopes
from app.durable.forgetting import purge_since_watch, watch_from
from app.durable.journal import DeliveryJournal
from app.durable.mailbox import (
    ClaimedInput,
    InputKind,
    InputState,
    Mailbox,
    NewInput,
    Posted,
    StaleClaimError,
)
from app.durable.proposals import ProposalFeed
from app.durable.schema import open_runtime_db
from app.durable.state import store_pause, stored_pause
from app.durable.transaction import RuntimeDb
from app.runtime.brief_gather import BriefWriter
from app.runtime.channel import OwnerChannel
from app.runtime.context import ContextBuilder, ContextSettings
from app.runtime.schedule import is_brief
from app.runtime.sender import Sender
from mama_core.errors import MamaError
from mama_core.memory import ActorKind, Engine, Grant, SessionFacts, TurnKind
from mama_core.memory.proposed_changes import CHANGE_ACTIONS
from mama_core.model import ChangeSet
from mama_core.store import Store

log = logging.getLogger(__name__)

T = TypeVar("T")

TURN_OF: dict[InputKind, TurnKind] = {
    InputKind.OWNER_MESSAGE: TurnKind.OWNER_MESSAGE,
    InputKind.SOURCE_DELTA: TurnKind.SOURCE_DELTA,
    InputKind.SCHEDULED: TurnKind.SCHEDULED,
    # An event from the desktop or a device is not the owner speaking.
    InputKind.NATIVE_EVENT: TurnKind.SOURCE_DELTA,
}


@dataclass(frozen=True)
class RuntimeSettings:
    """How the runtime behaves; defaults suit one owner."""

    agent_scopes: tuple[str, ...] = ("global",)
    default_scope: str = "global"
    owner_name: str = "owner"
    context: ContextSettings = field(default_factory=ContextSettings)
    send_retry_delays: tuple[float, ...] = (2.0, 10.0, 30.0, 120.0, 600.0)
    """Seconds before resending after the 1st, 2nd, … failure; the last repeats."""
    poll_seconds: float = 30.0
    typing_every: float = 4.0


class OwnerRuntime:
    """Mailbox → backend → journal → channel, one turn at a time."""

    def __init__(
        self,
        engine: Engine,
        store: Store,
        backend: AgentBackend,
        settings: RuntimeSettings | None = None,
        clock: Clock | None = None,
        db: RuntimeDb | None = None,
    ) -> None:
        self.engine = engine
        self.backend = backend
        self.settings = settings or RuntimeSettings()
        self.clock: Clock = clock or SystemClock()
        self._owns_db = db is None
        self.db = db or open_runtime_db(store)
        self.mailbox = Mailbox(self.db, self.clock)
        self.journal = DeliveryJournal(self.db, self.clock)
        self.grant = Grant.agent(self.settings.agent_scopes, self.settings.default_scope)
        self.briefs = BriefWriter(engine, self.db, self.clock, self.settings.owner_name)
        """Writes the daily brief itself when no model runs (and the draft for one)."""
        self.context = ContextBuilder(
            engine, self.db, self.mailbox, self.grant, self.settings.context, self.briefs
        )
        self.feed = ProposalFeed(self.db, self.journal)
        self.sender = Sender(
            self.journal, self.run_db, self._read_judgment, self.settings.send_retry_delays
        )
        self._channel: OwnerChannel | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mama-runtime-db")
        self._work = asyncio.Event()
        self._send = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._unsubscribe: Callable[[], None] | None = None
        self._unwatch: Callable[[], None] | None = None
        self._store_changed = asyncio.Event()
        self._backend_started = False
        self._backend_lock = asyncio.Lock()
        """One user of the backend at a time: a turn, or forgetting after a purge."""
        self._purged = asyncio.Event()
        self._scan_needed = False
        self._sending: asyncio.Task[bool] | None = None
        self._resumed = asyncio.Event()
        self._resumed.set()
        self._paused_since: datetime | None = None
        self._pauses = 0
        self._stored_pause: bool | None = None
        """The pause flag in the store as last read or written here."""
        self.turn_listeners: list[Callable[[ClaimedInput, TurnReply | None], None]] = []
        """Called after each turn (reply or None on failure): for the tray and tests."""
        self.text_listeners: list[Callable[[int, str], None]] = []
        """Called with (input id, the reply so far) while a backend that streams writes
        it (the chat window shows it growing; the stored reply comes when the turn ends)."""
        self.working_listeners: list[Callable[[bool], None]] = []
        """Called with True when a turn starts and False when it ends (the tray's icon)."""
        self.pause_listeners: list[Callable[[bool], None]] = []
        """Called with True/False when the runtime pauses or resumes (the tray's line)."""
        self.backend_problem: str | None = None
        self.tools_problem: str | None = None
        """Set while the last turn failed because the agent could not reach its tools
        (it mends itself: the tray's line says it, not its trouble state)."""
        """Why the agent backend could not run at its last try (None once it runs)."""
        self.forget_listeners: list[Callable[[int], None]] = []
        """Called after a purge ended the conversation, with the number of transcript
        files deleted (for tests and the tray)."""

    # --- life cycle -----------------------------------------------------

    async def start(self) -> None:
        """Recover what a crash left, subscribe to changes, start the tasks."""
        loop = asyncio.get_running_loop()
        released = await self.run_db(self.mailbox.release_abandoned)
        interrupted = await self.run_db(self.journal.release_interrupted)
        if released or interrupted:
            log.warning(
                "recovered after a crash: %d input(s) redelivered, %d message(s) in flight",
                len(released),
                len(interrupted),
            )

        def on_change(changes: ChangeSet) -> None:
            # A new record may be a proposal; a retire, outcome, link, commitment
            # close or reschedule, or a settings change may be a change proposed to
            # the owner's records or settings.
            if changes.added or changes.action in CHANGE_ACTIONS:
                loop.call_soon_threadsafe(self._scan_soon)
            if changes.action == "memory.purge":
                # The conversation may hold the erased text: end it now, not at the next turn.
                loop.call_soon_threadsafe(self._purged.set)

        self._unsubscribe = self.engine.subscribe(on_change)

        def on_store_change() -> None:
            # Any other connection's commit (``mama agent pause`` included).
            loop.call_soon_threadsafe(self._store_changed.set)

        self._unwatch = self.engine.watch_store(on_store_change)
        await self._follow_stored_pause()
        await self.run_db(self.feed.scan)
        self._purged.set()  # a purge made while no runtime ran: end that conversation now
        self._tasks = [
            asyncio.create_task(self._worker(), name="mama-worker"),
            asyncio.create_task(self._sender_loop(), name="mama-sender"),
            asyncio.create_task(self._poller(), name="mama-poller"),
            asyncio.create_task(self._pause_follower(), name="mama-pause-follower"),
            asyncio.create_task(self._purge_follower(), name="mama-purge-follower"),
        ]

    async def stop(self) -> None:
        """Stop the tasks and the backend; what is unfinished stays in the mailbox."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        sending = self._sending
        if sending is not None and not sending.done():
            # A message half sent is finished, so its journal row is not left "sending".
            with contextlib.suppress(Exception):
                await asyncio.wait_for(sending, 30)
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._unwatch is not None:
            self._unwatch()
            self._unwatch = None
        with contextlib.suppress(Exception):
            await self.backend.close()
        self._executor.shutdown(wait=True)
        if self._owns_db:
            self.db.close()

    # --- what transports call -------------------------------------------

    async def post(self, new: NewInput) -> Posted:
        """Put an input in the mailbox (durably) and wake the worker."""
        posted = await self.run_db(self.mailbox.post, new)
        if posted.duplicate:
            return posted
        self._work.set()
        since = self._paused_since
        if since is not None and new.kind is InputKind.OWNER_MESSAGE:
            # Once per pause: the owner should not wonder why nobody answers.
            await self.run_db(
                self.journal.enqueue_notice,
                f"paused:{since.isoformat()}:{self._pauses}",
                "The agent is paused. Your messages wait and are answered when it is "
                "resumed (Resume agent in the MAMA tray, or `mama agent resume`).",
            )
            self._send.set()
        return posted

    # --- pausing --------------------------------------------------------

    @property
    def paused(self) -> bool:
        return self._paused_since is not None

    def pause(self) -> None:
        """Take no new input until ``resume`` (a turn under way finishes; messages
        keep arriving in the mailbox; replies and proposal cards are still sent)."""
        if self._paused_since is None:
            self._paused_since = self.clock.now()
            self._pauses += 1
            self._resumed.clear()
            log.info("agent paused")
            self._tell_paused(True)

    async def set_paused(self, paused: bool) -> None:
        """Pause or resume now and keep it in the store (restarts, other processes)."""
        await self.run_db(store_pause, self.db, paused)
        self._stored_pause = paused
        if paused:
            self.pause()
        else:
            self.resume()

    async def _follow_stored_pause(self) -> None:
        """Apply a change of the stored flag made elsewhere (``mama agent pause``);
        only a change, so an in-memory pause or resume is not undone."""
        stored = await self.run_db(stored_pause, self.db)
        if stored != self._stored_pause:
            self._stored_pause = stored
            if stored:
                self.pause()
            else:
                self.resume()

    def resume(self) -> None:
        if self._paused_since is not None:
            self._paused_since = None
            self._resumed.set()
            self._work.set()
            log.info("agent resumed")
            self._tell_paused(False)

    def attach_channel(self, channel: OwnerChannel | None) -> None:
        """Send through ``channel`` from now on (None: hold messages in the journal)."""
        self._channel = channel
        self._send.set()

    def wake(self) -> None:
        """New inputs were stored by someone else on this loop (a connector's poll)."""
        self._work.set()

    def wake_sender(self) -> None:
        """Something changed for the channel (paired, back online): try sending now."""
        self._send.set()

    async def run_db(self, fn: Callable[..., T], *args: Any) -> T:
        """Run blocking SQL on the runtime's database thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args))

    # --- the worker -----------------------------------------------------

    async def _worker(self) -> None:
        while True:
            await self._resumed.wait()
            self._work.clear()
            claimed = await self.run_db(self.mailbox.claim)
            if claimed is None:
                await self._idle(self._work, await self.run_db(self.mailbox.next_due_at))
                continue
            try:
                await self._run_turn(claimed)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("turn for input %s failed inside the runtime", claimed.id)

    async def _run_turn(self, claimed: ClaimedInput) -> None:
        reply: TurnReply | None = None
        self._tell_working(True)
        try:
            async with self._typing(claimed):
                reply = await self._turn(claimed)
        except ToolsUnreachableError as exc:
            # Not the agent's failure: its tools were not up. Said in the tray's line
            # until a turn has its tools again; the mailbox tries the turn again.
            self.tools_problem = exc.message
            await self._failed(claimed, exc.message)
        except BackendError as exc:
            await self._failed(claimed, exc.message)
        except MamaError as exc:
            await self._failed(claimed, f"{exc.code}: {exc.message}")
        finally:
            self._tell_working(False)
        if reply is not None and self.tools_problem is not None:
            self.tools_problem = None
            log.info("the agent's tools are reachable again")
        if reply is not None:
            try:
                await self.run_db(self.mailbox.complete, claimed, reply.text, reply.cards)
            except StaleClaimError:
                log.warning("input %s was reclaimed meanwhile; its reply is dropped", claimed.id)
                reply = None
            # The turn is over: what it proposed can now be carded together.
            self._scan_soon()
        for listener in list(self.turn_listeners):
            listener(claimed, reply)

    def _tell_text(self, input_id: int, text: str) -> None:
        for listener in list(self.text_listeners):
            try:
                listener(input_id, text)
            except Exception:
                log.exception("a reply listener failed")

    def _tell_working(self, working: bool) -> None:
        _tell(self.working_listeners, working)

    def _tell_paused(self, paused: bool) -> None:
        _tell(self.pause_listeners, paused)

    async def _turn(self, claimed: ClaimedInput) -> TurnReply:
        async with self._backend_lock:
            return await self._turn_locked(claimed)

    async def _purge_follower(self) -> None:
        """After a purge (this process's or another's): end the conversation and delete
        its transcripts at once, between turns."""
        while True:
            await self._purged.wait()
            self._purged.clear()
            try:
                async with self._backend_lock:
                    await self._forget_session_after_purge()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("ending the conversation after a purge failed")

    async def _turn_locked(self, claimed: ClaimedInput) -> TurnReply:
        await self._forget_session_after_purge()
        if _is_brief(claimed) and not self.backend.writes_briefs:
            # No model: MAMA writes the brief itself.
            return TurnReply(await self.run_db(self.briefs.compose, claimed.id))
        if _is_today(claimed):
            # The owner's own /today (the chat window, the desk): a read of the calendar
            # and the ledger needs no model, whatever the backend.
            return TurnReply(await self.run_db(self.briefs.today))
        try:
            await self._ensure_backend()
        except BackendUnavailableError as exc:
            return await self._unavailable(claimed, exc, self.facts_for(claimed))
        facts = self.facts_for(claimed)  # after start: the backend knows its version
        tools = ToolBox(self.engine, self.turn_grant(claimed), facts, claimed.id)
        fresh = self.backend.wants_session_context
        prompt = await self.run_db(self.context.build, claimed, facts, self.backend.name, fresh)
        request = TurnRequest(
            prompt,
            claimed.text,
            claimed.kind,
            claimed.id,
            claimed.evidence,
            observations=tuple(delta_observations(claimed.meta))
            if claimed.kind is InputKind.SOURCE_DELTA
            else (),
            on_text=functools.partial(self._tell_text, claimed.id),
        )
        try:
            return await self.backend.run_turn(request, tools)
        except BackendUnavailableError as exc:
            self._backend_started = False
            return await self._unavailable(claimed, exc, facts)

    async def _forget_session_after_purge(self) -> None:
        """A purge since the conversation began: it may hold the erased text, so end it,
        delete its transcripts and start afresh (see ``app.durable.forgetting``)."""
        head = await self.run_db(purge_since_watch, self.db, self.backend.name)
        if head is None:
            return
        if self._backend_started:
            await self.backend.close()
            self._backend_started = False
        removed = await self.backend.forget_session()
        for listener in list(self.forget_listeners):
            listener(len(removed))
        log.info(
            "a purge happened: the %s conversation was ended; %d transcript file(s) deleted",
            self.backend.name,
            len(removed),
        )
        await self.run_db(watch_from, self.db, self.backend.name, head)

    async def _ensure_backend(self) -> None:
        if not self._backend_started:
            await self.backend.start(agent_tools(self.engine, self.grant))
            self._backend_started = True
            self.backend_problem = None

    async def _unavailable(
        self, claimed: ClaimedInput, exc: BackendUnavailableError, facts: SessionFacts
    ) -> TurnReply:
        """The backend cannot run: tell the owner plainly; slash commands still work."""
        log.warning("backend %s unavailable: %s", self.backend.name, exc.message)
        self.backend_problem = exc.message
        if _is_brief(claimed):
            # The owner still gets the brief, written by MAMA, with why.
            text = await self.run_db(self.briefs.compose, claimed.id)
            return TurnReply(f"{text}\n\n(Written by MAMA itself: {exc.message})")
        if claimed.kind is not InputKind.OWNER_MESSAGE:
            raise BackendError(exc.message)
        fallback = CommandModeBackend(note=exc.message)
        if claimed.text.strip().startswith("/") and claimed.evidence is None:
            owner_facts = self._owner_voice(facts)
            tools = ToolBox(self.engine, self.grant, owner_facts, claimed.id)
            request = TurnRequest(claimed.text, claimed.text, claimed.kind, claimed.id)
            answer = await fallback.run_turn(request, tools)
            return TurnReply(f"{exc.message}\n\n{answer.text}", answer.cards)
        return TurnReply(f"{exc.message}\nMeanwhile, commands still work: send /help.")

    async def _failed(self, claimed: ClaimedInput, error: str) -> None:
        log.warning("turn for input %s failed: %s", claimed.id, error)
        try:
            failure = await self.run_db(self.mailbox.fail, claimed, error)
        except StaleClaimError:
            return
        if claimed.kind is not InputKind.OWNER_MESSAGE:
            return
        if failure.state is InputState.DEAD:
            text = (
                f"I could not answer your message after {failure.attempts} tries and gave up "
                f"({error}). Please send it again when the agent works."
            )
        elif failure.attempts == 1 and failure.retry_at is not None:
            text = (
                f"I could not answer your message yet ({error}). "
                f"I will try again at {_hhmm(failure.retry_at)} UTC."
            )
        else:
            return
        await self.run_db(
            self.journal.enqueue_notice, f"failure:{claimed.id}:{failure.attempts}", text
        )
        self._send.set()

    def turn_grant(self, claimed: ClaimedInput) -> Grant:
        """The grant of ``claimed``'s turn: a source delta that names its content's scopes
        (a connector's own scope) works only inside them, so hostile content cannot
        make the agent write into ``global`` or another source's scope; everything
        else gets the agent's whole grant. Scopes the agent was not granted are dropped:
        nothing left means a grant that reads and writes nothing."""
        named = content_scopes(claimed.meta) if claimed.kind is InputKind.SOURCE_DELTA else None
        if not named:
            return self.grant
        inside = named if self.grant.all_scopes else named & self.grant.scopes
        narrowed = self.grant.narrowed(frozenset(inside))
        if narrowed.default_scope is None and len(inside) == 1:
            narrowed = dataclasses.replace(narrowed, default_scope=next(iter(inside)))
        return narrowed

    def facts_for(self, claimed: ClaimedInput) -> SessionFacts:
        """What the host knows about this turn, for provenance and the owner-turn rule.

        Content the owner forwarded or quoted is outside content delivered by the
        owner: its turn is a source-delta turn (not an owner turn), and the agent,
        never the owner's voice, is the actor. Any turn but the owner's plain message
        starts tainted (it carries words the owner did not write); an owner's turn
        becomes tainted when the agent reads such words (``ToolBox``).
        """
        forwarded = claimed.evidence is not None
        facts = SessionFacts(
            actor_kind=ActorKind.AGENT,
            actor_name=self.backend.name,
            actor_version=self.backend.version,
            turn=TurnKind.SOURCE_DELTA if forwarded else TURN_OF[claimed.kind],
            source_refs=(claimed.observation_ref, claimed.source_ref),
            backend=self.backend.name,
            message_ref=claimed.source_ref if claimed.kind is InputKind.OWNER_MESSAGE else None,
            tainted=forwarded or claimed.kind is not InputKind.OWNER_MESSAGE,
            origin=origin_of(claimed),
        )
        if (
            self.backend.speaks_for_owner
            and claimed.kind is InputKind.OWNER_MESSAGE
            and not forwarded
        ):
            return self._owner_voice(facts)
        return facts

    def _owner_voice(self, facts: SessionFacts) -> SessionFacts:
        """The owner's own typed command (command mode): the owner is the actor."""
        return SessionFacts(
            actor_kind=ActorKind.OWNER,
            actor_name=self.settings.owner_name,
            actor_version=None,
            turn=facts.turn,
            source_refs=facts.source_refs,
            backend=CommandModeBackend.name,
            message_ref=facts.message_ref,
            tainted=facts.tainted,
            origin=facts.origin,
        )

    @contextlib.asynccontextmanager
    async def _typing(self, claimed: ClaimedInput) -> AsyncIterator[None]:
        if claimed.kind is not InputKind.OWNER_MESSAGE or self._channel is None:
            yield
            return
        done = asyncio.Event()
        channel = self._channel

        async def keep_typing() -> None:
            while not done.is_set():
                with contextlib.suppress(Exception):
                    await channel.typing()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(done.wait(), self.settings.typing_every)

        task = asyncio.create_task(keep_typing(), name="mama-typing")
        try:
            yield
        finally:
            done.set()
            await task

    # --- the sender and the poller --------------------------------------

    def _scan_soon(self) -> None:
        self._scan_needed = True
        self._send.set()

    async def _sender_loop(self) -> None:
        while True:
            self._send.clear()
            if self._scan_needed:
                self._scan_needed = False
                try:
                    await self.run_db(self.feed.scan)
                except MamaError as exc:
                    log.warning("proposal scan failed: %s", exc.message)
            channel = self._channel
            if channel is not None and channel.ready():
                try:
                    self._sending = asyncio.create_task(self.sender.send_next(channel))
                    if await asyncio.shield(self._sending):
                        continue
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("the sender failed; it will try again")
                due = await self.run_db(self.journal.next_due_at)
            else:
                due = None
            await self._idle(self._send, due)

    async def _poller(self) -> None:
        while True:
            await asyncio.sleep(self.settings.poll_seconds)
            try:
                await self.run_db(self.feed.scan)
                await self._follow_stored_pause()
            except MamaError as exc:
                log.warning("periodic check failed: %s", exc.message)
            self._send.set()
            self._work.set()

    async def _pause_follower(self) -> None:
        """Follow the stored pause flag as soon as another connection commits (the
        engine's commit feed), not only on the periodic pass; and look for messages
        and inputs another process queued."""
        while True:
            await self._store_changed.wait()
            self._store_changed.clear()
            try:
                await self._follow_stored_pause()
            except MamaError as exc:
                log.warning("reading the pause flag failed: %s", exc.message)
            # Another process may have queued a message (``mama brief now --send``) or
            # posted the owner's desk message (``mama ask``) for this runtime to answer.
            self._send.set()
            self._work.set()

    async def _idle(self, event: asyncio.Event, due: datetime | None) -> None:
        """Wait for ``event``, for ``due``, or for the poll interval, whichever is first."""
        timeout = self.settings.poll_seconds
        if due is not None:
            timeout = max(0.0, min(timeout, (due - self.clock.now()).total_seconds()))
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a
        # cancellation that arrives as the event fires, and stop() would then wait
        # forever for a loop that never ends (seen with a 50 ms poll interval).
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await event.wait()

    async def _read_judgment(self, judgment_id: int) -> dict[str, Any] | None:
        """A judgment as the owner sees it (for review cards)."""
        try:
            found = await self.engine.dispatch_async(
                "memory.read", {"id": judgment_id}, owner_facts(), Grant.owner()
            )
        except MamaError as exc:
            log.info("judgment %s not readable for its card: %s", judgment_id, exc.code)
            return None
        return dict(found.get("record") or {})


def _is_brief(claimed: ClaimedInput) -> bool:
    return claimed.kind is InputKind.SCHEDULED and is_brief(claimed.meta)


def _is_today(claimed: ClaimedInput) -> bool:
    words = claimed.text.strip().split()
    return (
        claimed.kind is InputKind.OWNER_MESSAGE
        and claimed.evidence is None
        and len(words) == 1
        and words[0].lower().split("@", 1)[0] == "/today"
    )


def _tell(listeners: list[Callable[[bool], None]], value: bool) -> None:
    for listener in list(listeners):
        try:
            listener(value)
        except Exception:
            log.exception("a runtime listener failed")


def origin_of(claimed: ClaimedInput) -> str | None:
    """Where an input's outside words come from, for a person: ``#ops (work-slack)``,
    ``a message the owner forwarded from Bob``; None for the owner's own words."""
    how = claimed.evidence
    if claimed.kind is InputKind.OWNER_MESSAGE:
        if how is None:
            return None
        sender = f" from {claimed.author}" if claimed.author else ""
        return f"a message the owner {how.value}{sender}"
    if claimed.kind is InputKind.SCHEDULED:
        return "a scheduled run"
    connector = str(claimed.meta.get(CONNECTOR_KEY) or claimed.source)
    channels = _names(claimed.meta.get(CHANNELS_KEY))
    authors = _names(claimed.meta.get(AUTHORS_KEY))
    where = f"{', '.join(channels)} ({connector})" if channels else connector
    if 0 < len(authors) <= MAX_AUTHORS_NAMED:
        where += f" by {', '.join(authors)}"
    return where


MAX_AUTHORS_NAMED = 3
"""An origin names a delivery's authors when there are at most this many."""


def _names(value: object) -> list[str]:
    if not isinstance(value, list):
        return []
    return [str(v) for v in value if v]  # pyright: ignore[reportUnknownVariableType]


def owner_facts(name: str = "owner") -> SessionFacts:
    """The paired owner acting through the messenger (a button, a command)."""
    return SessionFacts(
        actor_kind=ActorKind.OWNER, actor_name=name, turn=TurnKind.OWNER_MESSAGE, backend=None
    )


def _hhmm(moment: datetime) -> str:
    return moment.strftime("%H:%M")
