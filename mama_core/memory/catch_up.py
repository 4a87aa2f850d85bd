"""Catching up on vectors: a store opened with another embedding model fills them itself.

Vectors of different models are never compared, so after the default model
changes (an update) every old judgment lacks a vector of the new ``model_id``
and the vector arm cannot find it; recall still finds it by its words (the
lexical arms read every row the predicate admits, vector or not). A long-lived
process (the tray, ``mama daemon``, ``mama mcp``) starts a ``VectorCatchUp``
that embeds those judgments in the background, batch by batch, until none lacks
one:

- the batch is read on a pooled read connection and embedded outside any
  transaction, so saves and searches go on meanwhile (a search waits at most for
  one batch on the embedder's lock);
- the vectors are written by the one writer thread, as a job between commands,
  each batch in its own ``BEGIN IMMEDIATE`` (``reembed.write_vectors``): a
  killed process keeps every batch it committed and the next start continues;
- the insert is ``INSERT OR IGNORE`` on the table's key ``(judgment_id,
  model_id)``, so two processes catching up on the same file at once never
  fail or duplicate a row, and a vector written first keeps its seal;
- the vector cache re-reads every judgment of the batch afterwards, including
  those another process embedded, so this process's vector arm finds them.

Which judgments lack a vector comes from the vector cache (``missing_vectors``),
so a judgment another process saved with an older model is caught up too when
its change-set arrives (``poke``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import partial

from mama_core.embeddings.base import Embedder
from mama_core.errors import MamaError
from mama_core.recall.reembed import embed_rows, lacking_rows, write_vectors
from mama_core.recall.vector_cache import VectorCache
from mama_core.store import sqlcipher
from mama_core.store.connection import Connection

log = logging.getLogger(__name__)

CATCH_UP_BATCH = 32
"""Judgments embedded per batch: small enough that a search waiting for the embedder
waits little, large enough that each batch's commit is worth its fsync."""
RETRY_SECONDS = 10.0
"""After a failed batch (the store busy for longer than its timeout), wait this long
(or until poked or stopped) before trying again."""


@dataclass(frozen=True)
class CatchUpProgress:
    """Where a catch-up stands: ``done`` of ``total`` judgments that lacked a vector of
    ``model_id`` when this pass started."""

    model_id: str
    done: int
    total: int

    @property
    def finished(self) -> bool:
        return self.done >= self.total

    def describe(self) -> str:
        """One line for a person, e.g. for the tray's status line or a log."""
        if self.finished:
            return f"Memory search is up to date for the new model ({self.total} memories)."
        return f"Updating memory search for the new model: {self.done} of {self.total}"


ProgressListener = Callable[[CatchUpProgress], None]
Borrow = Callable[[], AbstractContextManager[Connection]]
WriterJob = Callable[[Callable[[Connection], int]], "Future[int]"]


class VectorCatchUp:
    """A background thread giving every judgment a vector of the engine's model."""

    def __init__(
        self,
        embedder: Embedder,
        cache: VectorCache,
        borrow: Borrow,
        run_on_writer: WriterJob,
        batch: int = CATCH_UP_BATCH,
    ) -> None:
        if batch < 1:
            raise ValueError("batch must be >= 1")
        self._embedder = embedder
        self._cache = cache
        self._borrow = borrow
        self._run_on_writer = run_on_writer
        self._batch = batch
        self._lock = threading.Lock()
        self._listeners: list[ProgressListener] = []
        self._progress: CatchUpProgress | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Condition(self._lock)
        self._busy = True  # until the first pass has looked
        self._thread = threading.Thread(target=self._run, name="mama-catch-up", daemon=True)

    @property
    def model_id(self) -> str:
        return self._embedder.model_id

    @property
    def progress(self) -> CatchUpProgress | None:
        """The latest pass's progress (None: nothing has lacked a vector so far)."""
        with self._lock:
            return self._progress

    def start(self) -> None:
        """Start the thread (once)."""
        if not self._thread.is_alive() and not self._stop.is_set():
            self._thread.start()

    def subscribe(self, listener: ProgressListener) -> Callable[[], None]:
        """Call ``listener`` after each batch (on the catch-up thread; keep it short)
        and at once with where it stands now, if anything lacked a vector. Returns a
        function that unsubscribes."""
        with self._lock:
            self._listeners.append(listener)
            current = self._progress
        if current is not None:
            listener(current)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def poke(self) -> None:
        """Look again (judgments were added, maybe by a process with an older model)."""
        with self._lock:
            self._busy = True
        self._wake.set()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until a pass found nothing left to embed (for tests and shutdown)."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._busy or self._stop.is_set(), timeout)

    def stop(self) -> None:
        """Stop after the current batch and wait for the thread."""
        self._stop.set()
        self._wake.set()
        with self._idle:
            self._idle.notify_all()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()

    # --- the thread -------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()
            try:
                self._pass()
            except Exception as exc:  # a background thread: log, wait, try again; never die
                if isinstance(exc, MamaError | sqlcipher.Error):  # the store's, not a bug
                    log.warning(
                        "catching up on %s vectors failed (%s); trying again", self.model_id, exc
                    )
                else:
                    log.exception("catching up on %s vectors failed; trying again", self.model_id)
                self._wake.wait(RETRY_SECONDS)
                continue
            with self._idle:
                if not self._wake.is_set():
                    self._busy = False
                self._idle.notify_all()
            self._wake.wait()

    def _pass(self) -> None:
        """Embed every judgment the cache knows to lack a vector, oldest first."""
        missing = self._cache.missing_vectors()
        if not missing:
            return
        total, done = len(missing), 0
        step = max(self._batch, total // 10)  # log about every tenth
        log.info("%d memories lack a %s vector; embedding them", total, self.model_id)
        self._announce(CatchUpProgress(self.model_id, 0, total))
        for start in range(0, total, self._batch):
            if self._stop.is_set():
                return
            ids = missing[start : start + self._batch]
            with self._borrow() as conn:
                rows = lacking_rows(conn, self.model_id, ids)
            if rows:  # another process may have embedded them meanwhile
                items = embed_rows(self._embedder, rows)
                self._run_on_writer(
                    partial(
                        write_vectors, model_id=self.model_id, dim=self._embedder.dim, items=items
                    )
                ).result()
            with self._borrow() as conn:
                self._cache.refresh(conn, ids)
            done += len(ids)
            self._announce(CatchUpProgress(self.model_id, done, total))
            if done < total and done // step != (done - len(ids)) // step:
                log.info("catching up on %s vectors: %d of %d", self.model_id, done, total)
        log.info("caught up: %d memories now have a %s vector", total, self.model_id)

    def _announce(self, progress: CatchUpProgress) -> None:
        with self._lock:
            self._progress = progress
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(progress)
            except Exception:
                log.exception("a catch-up progress listener failed")
