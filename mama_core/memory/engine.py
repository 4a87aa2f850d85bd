"""The judgment engine: one object front ends call with an action and a payload.

``dispatch`` validates and permits the call, then runs a read on a pooled read
connection or hands a mutation to the one writer thread and waits for its
receipt. ``dispatch_async`` does the same from asyncio without blocking the loop.
Both speak the wire form agents and MCP clients see (an action name, a dict).
In-process callers (CLI, review window, runtime) may instead pass the action's
input model to ``mutate`` / ``read`` and get a typed ``Receipt`` back: the same
checks, the same writer.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

import numpy as np

from mama_core.embeddings.base import PASSAGE, Embedder, score_scale
from mama_core.errors import EngineError, MamaError
from mama_core.json_types import JsonObject
from mama_core.memory.anchor import (
    AnchorKeeper,
    anchor_for,
    is_anchored,
    mark_anchored,
    observation_count,
)
from mama_core.memory.catalog import CATALOG, Catalog
from mama_core.memory.catch_up import VectorCatchUp
from mama_core.memory.commit_feed import CommitFeed
from mama_core.memory.config import EngineConfig
from mama_core.memory.dispatcher import (
    Call,
    Env,
    ReplyReader,
    no_replies,
    prepare_call,
    prepare_input,
)
from mama_core.memory.events import ChainHead
from mama_core.memory.inputs import ActionInput, MutationInput
from mama_core.memory.purge_pending import PendingPurgeRetry, pending_purge, settle_if_pending
from mama_core.memory.reader_pool import ReaderPool
from mama_core.memory.restatements import NearRecords
from mama_core.memory.results import ActionResult
from mama_core.memory.writer import Command, HeadSink, Writer
from mama_core.model import ChangeSet
from mama_core.recall import Recall, VectorCache
from mama_core.receipt import Receipt
from mama_core.scopes.grants import Grant
from mama_core.session import SessionFacts
from mama_core.store import Store, sqlcipher
from mama_core.store.connection import Connection, log_failure

log = logging.getLogger(__name__)

T = TypeVar("T")

IMPORT_LOADS_CACHE = 50
"""A batch of at least this many saves loads the vector cache first (if no search has):
each save then finds the records it may restate in memory instead of reading them."""
ResultT = TypeVar("ResultT", bound=ActionResult)


class Engine:
    """Actions over one open store, with one writer thread and pooled readers."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        config: EngineConfig | None = None,
        anchor_keeper: AnchorKeeper | None = None,
        replies: ReplyReader | None = None,
    ) -> None:
        """``anchor_keeper``, if given, keeps the chain head outside the file after
        each commit (``mama verify`` then finds a cut tail or a rewritten chain).
        ``replies`` is the app's read of what its runtime sent back for an input (the
        app's tables, which the core does not name); without it no reply quotes a
        memory (``memory.quotes``)."""
        self.store = store
        self.embedder = embedder
        self.config = config or EngineConfig()
        self.catalog: Catalog = CATALOG
        on_head: HeadSink | None = None
        if anchor_keeper is not None:
            keeper = anchor_keeper

            def keep(head: ChainHead) -> None:  # on the writer thread, after a commit
                anchored = is_anchored(store.conn)
                if anchored and keeper.load() is None:
                    # Someone removed the anchor: keeping a new one would bless whatever
                    # the file now holds. The owner accepts it with `mama verify --reanchor`.
                    log.warning("the chain anchor kept outside the store is gone; not replaced")
                    return
                count = observation_count(store.conn)
                keeper.save(anchor_for(store.secret, store.store_id, head, count))
                if not anchored:
                    mark_anchored(store.conn)

            on_head = keep
        self._feed = CommitFeed(store.new_connection, self.config.commit_poll_seconds)
        self._near = NearRecords(self._loaded_cache)
        self._writer = Writer(
            store.conn, store.path, store.secret, self._feed, on_head, self._near.begin
        )
        self._readers = ReaderPool(store, self.config.reader_connections)
        scale = score_scale(embedder)
        threshold = self.config.tombstone_threshold
        self._env = Env(
            self.config,
            embedder.model_id,
            self._embed,
            self.recall,
            tombstone_threshold=scale.duplicate_threshold if threshold is None else threshold,
            swap_same_meaning=scale.swap_same_meaning,
            restatement_threshold=scale.restatement_threshold,
            check_restatements=self.config.check_restatements,
            near=self._near,
            replies=no_replies if replies is None else replies,
        )
        self._closed = threading.Event()
        self._recall: Recall | None = None
        self._recall_lock = threading.Lock()
        self._catch_up: VectorCatchUp | None = None
        self._catch_up_lock = threading.Lock()
        self.purge_retry = PendingPurgeRetry(self._writer.run, is_pending=self._purge_pending)
        """Finishes a purge whose WAL truncation a reader blocked (here or in another
        process, or before this process started)."""
        self._feed.subscribe(self._after_commit)
        self.purge_retry.start()

    def dispatch(
        self,
        action: str,
        payload: Mapping[str, Any],
        session: SessionFacts,
        grant: Grant,
    ) -> JsonObject:
        """Run one action for a caller; a mutation returns its receipt, a read its result.

        Raises a ``MamaError`` subclass (see ``mama_core.errors``) on refusal.
        """
        if self._closed.is_set():
            raise EngineError("The memory engine is closed.")
        call = prepare_call(self.catalog, action, payload, session, grant)
        if call.spec.mutates:
            return self._mutate(call).to_wire()
        return self._read(call)

    def mutate(self, inp: MutationInput, session: SessionFacts, grant: Grant) -> Receipt:
        """Run the mutation whose input ``inp`` is (``SaveInput`` is memory.save ...) and
        return its typed receipt; refusals raise exactly as ``dispatch`` does."""
        call = self._prepare_input(inp, session, grant)
        if not call.spec.mutates:
            raise EngineError(f"{call.spec.name} is a read; use read().")
        return self._mutate(call)

    def mutate_action(
        self, action: str, payload: Mapping[str, Any], session: SessionFacts, grant: Grant
    ) -> Receipt:
        """``dispatch`` of a mutation by name, returning the typed receipt (the one the
        writer built) instead of its wire form; a read is refused."""
        if self._closed.is_set():
            raise EngineError("The memory engine is closed.")
        call = prepare_call(self.catalog, action, payload, session, grant)
        if not call.spec.mutates:
            raise EngineError(f"{action} is a read; use dispatch() or read().")
        return self._mutate(call)

    async def mutate_action_async(
        self, action: str, payload: Mapping[str, Any], session: SessionFacts, grant: Grant
    ) -> Receipt:
        """``mutate_action`` awaited from asyncio; the work runs off the event loop."""
        return await asyncio.to_thread(self.mutate_action, action, payload, session, grant)

    def read_as(
        self,
        model: type[ResultT],
        action: str,
        payload: Mapping[str, Any],
        session: SessionFacts,
        grant: Grant,
    ) -> ResultT:
        """``dispatch`` of the read ``action``, returning its result model (``model``, which
        must be the action's) instead of its wire form; refusals raise as ``dispatch``."""
        if self._closed.is_set():
            raise EngineError("The memory engine is closed.")
        call = prepare_call(self.catalog, action, payload, session, grant)
        if call.spec.mutates:
            raise EngineError(f"{action} is a mutation; use mutate_action().")
        with self._readers.borrow() as conn:
            result = call.spec.run_read_result(conn, call, self._env)
        if not isinstance(result, model):
            raise TypeError(f"{action} returns {type(result).__name__}, not {model.__name__}")
        return result

    def read(self, inp: ActionInput, session: SessionFacts, grant: Grant) -> JsonObject:
        """Run the read whose input ``inp`` is (``SearchInput`` is memory.search ...)."""
        call = self._prepare_input(inp, session, grant)
        if call.spec.mutates:
            raise EngineError(f"{call.spec.name} is a mutation; use mutate().")
        return self._read(call)

    async def mutate_async(
        self, inp: MutationInput, session: SessionFacts, grant: Grant
    ) -> Receipt:
        """``mutate`` awaited from asyncio; the work runs off the event loop."""
        return await asyncio.to_thread(self.mutate, inp, session, grant)

    async def read_async(self, inp: ActionInput, session: SessionFacts, grant: Grant) -> JsonObject:
        """``read`` awaited from asyncio; the work runs off the event loop."""
        return await asyncio.to_thread(self.read, inp, session, grant)

    def query(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn`` on one of the engine's read connections and return what it returns.

        For reads no action answers (a window's counts and lists, ``ui.queries``): the
        caller hands over a function of a connection instead of keeping a connection
        of its own, so it reads through the same pool as every action, follows the
        engine it is given, and never holds a read transaction open (the borrow ends
        it). ``fn`` must only read.
        """
        if self._closed.is_set():
            raise EngineError("The memory engine is closed.")
        with self._readers.borrow() as conn:
            return fn(conn)

    def _prepare_input(self, inp: ActionInput, session: SessionFacts, grant: Grant) -> Call[Any]:
        if self._closed.is_set():
            raise EngineError("The memory engine is closed.")
        return prepare_input(self.catalog, inp, session, grant)

    def _read(self, call: Call[Any]) -> JsonObject:
        with self._readers.borrow() as conn:
            return call.spec.run_read(conn, call, self._env)

    def dispatch_batch(
        self,
        action: str,
        payloads: list[Mapping[str, Any]],
        session: SessionFacts,
        grant: Grant,
    ) -> list[JsonObject]:
        """Run one mutating action for many payloads in ONE transaction (an import).

        Each payload is validated and permitted exactly as ``dispatch`` would, and
        each gets its own event and receipt; if any is refused, nothing is written
        and the error names the payload's index in ``details["index"]``.
        """
        if self._closed.is_set():
            raise EngineError("The memory engine is closed.")
        if (
            action == "memory.save"
            and len(payloads) >= IMPORT_LOADS_CACHE
            and self.config.check_restatements
        ):
            # Each save compares itself with the records it may restate: from the vector
            # cache that is one product, read from the store it is ~100 rows per save.
            self.recall()
        commands: list[Command] = []
        for index, payload in enumerate(payloads):
            try:
                call = prepare_call(self.catalog, action, payload, session, grant)
                if not call.spec.mutates:
                    raise EngineError(f"{action} is a read; only mutations can be batched.")
                commands.append(call.spec.command(call, self._env))
            except MamaError as exc:
                exc.details.setdefault("index", index)
                raise
        try:
            results = self._writer.submit_batch(commands).result()
        except MamaError as exc:
            exc.details.setdefault("batch_size", len(commands))
            raise
        return [result.receipt.to_wire() for result in results]

    async def dispatch_async(
        self,
        action: str,
        payload: Mapping[str, Any],
        session: SessionFacts,
        grant: Grant,
    ) -> JsonObject:
        """``dispatch`` awaited from asyncio; the work runs off the event loop."""
        return await asyncio.to_thread(self.dispatch, action, payload, session, grant)

    def keyed_hash(self, value: Any) -> str:
        """The store's keyed hash (HMAC under the store secret) of ``value``: what the
        log may keep of text that a purge erases."""
        return self.store.secret.hash(value)

    def subscribe(self, callback: Callable[[ChangeSet], None]) -> Callable[[], None]:
        """Call ``callback`` after every commit to the store, this process's or another's,
        once each and in event order (on the writer thread or the commit feed's; keep
        it short, e.g. post to your own loop, and never wait there for a write).
        Returns a function that unsubscribes."""
        return self._feed.subscribe(callback)

    def watch_store(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` (on the commit feed's thread) after any commit of another
        connection, including state the event log does not carry (the pause flag).
        Returns a function that stops watching."""
        return self._feed.watch(callback)

    def recall(self) -> Recall:
        """Hybrid recall over this store, made on first use: the vector cache is
        loaded from the ``embeddings`` table once, then kept current from the
        change-sets of every commit (other processes' included)."""
        with self._recall_lock:
            if self._recall is None:
                cache = VectorCache(
                    self.embedder.model_id, self.embedder.dim, dtype=self.config.vector_dtype
                )
                # Subscribe before loading, so no commit falls between the two;
                # applying a change-set the load already saw is harmless.
                self._feed.subscribe(lambda changes: self._refresh_cache(cache, changes))
                with self._readers.borrow() as conn:
                    cache.reload(conn)
                self._recall = Recall(self.store.new_connection, self.embedder, cache)
            return self._recall

    def catch_up_vectors(self) -> VectorCatchUp:
        """Start (once) embedding, in the background, every judgment that lacks a vector
        of this engine's model, e.g. after the default model changed; returns it so the
        caller can show its progress. For long-lived processes: a short command
        should not start a long job it would leave half done.

        The batches are read and embedded off the writer, then written by the writer
        thread as jobs between commands (the one writer; ``catch_up`` says why)."""
        # Its own lock: recall() takes the recall lock and then the feed's, and a
        # change-set subscriber may make recall while the feed's lock is held.
        with self._catch_up_lock:
            if self._closed.is_set():
                raise EngineError("The memory engine is closed.")
            if self._catch_up is None:
                cache = self.recall().cache
                assert cache is not None  # the engine's recall always has one
                catch_up = VectorCatchUp(
                    self.embedder, cache, self._readers.borrow, self._writer.run
                )

                def poke(changes: ChangeSet) -> None:
                    if changes.added:
                        catch_up.poke()

                self._feed.subscribe(poke)
                catch_up.start()
                self._catch_up = catch_up
            return self._catch_up

    @property
    def catch_up(self) -> VectorCatchUp | None:
        """The background catch-up, if ``catch_up_vectors`` started one."""
        return self._catch_up

    def _settle_pending_purge(self) -> None:
        """A last try before closing, so a short-lived process (a CLI command) finishes a
        pending purge when the store is free."""
        try:
            self._writer.run(settle_if_pending).result()
        except (MamaError, sqlcipher.Error, OSError) as exc:
            # On the way out, often after the command's own error was shown: the log only.
            log_failure(log, "finishing a pending purge failed", exc, self.store.path, logging.INFO)

    def _after_commit(self, changes: ChangeSet) -> None:
        if changes.action == "memory.purge":
            self.purge_retry.poke()

    def _refresh_cache(self, cache: VectorCache, changes: ChangeSet) -> None:
        if self._writer.on_writer_thread():
            # This writer's own commit: its connection just wrote these pages and still
            # holds them, where a reader decrypts them again from the WAL (~0.6 ms a save).
            cache.apply_changeset(self.store.conn, changes)
            return
        with self._readers.borrow() as conn:
            cache.apply_changeset(conn, changes)

    def _loaded_cache(self) -> VectorCache | None:
        """The vector cache if recall loaded it (a save then finds the records it may
        restate there); never loads it: a one-save command would read the whole store."""
        recall = self._recall
        return None if recall is None else recall.cache

    @property
    def vector_cache(self) -> VectorCache | None:
        """The loaded vector cache, if recall has been used (for ``mama doctor``)."""
        return None if self._recall is None else self._recall.cache

    def close(self) -> None:
        """Finish queued writes and close the read connections (the store stays open)."""
        if self._closed.is_set():
            return
        with self._catch_up_lock:
            self._closed.set()
        if self._catch_up is not None:
            self._catch_up.stop()  # before the writer: its last batch is a writer job
        self.purge_retry.stop()
        self._settle_pending_purge()
        self._writer.close()
        self._feed.close()
        if self._recall is not None:
            self._recall.close()
        self._readers.close()

    def _purge_pending(self) -> bool:
        """Whether a purge mark is waiting (read on a reader, not the writer's connection)."""
        with self._readers.borrow() as conn:
            return pending_purge(conn) is not None

    def _mutate(self, call: Call[Any]) -> Receipt:
        with self._readers.borrow() as conn:
            known = (
                conn.execute(
                    "SELECT 1 FROM receipts WHERE command_id = ?", (call.command_id,)
                ).fetchone()
                is not None
            )
        command = call.spec.command(replace(call, replay_known=known), self._env)
        return self._writer.submit(command).result().receipt

    def _embed(self, text: str) -> np.ndarray:
        # Everything the engine embeds is stored text (judgments, tombstones): passages.
        return np.asarray(self.embedder.embed_one(text, PASSAGE), dtype=np.float32)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
