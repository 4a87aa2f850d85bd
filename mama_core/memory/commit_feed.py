"""Every commit to the store — this process's and every other's — as change-sets.

The writer publishes its own change-sets here right after each commit. Commits
of other processes (``mama mcp``, the CLI, the daemon, the tray) are found by
polling ``PRAGMA data_version`` on a dedicated read connection: SQLite changes
it whenever *another* connection commits. The events appended since the last
delivered one are then read and turned into the same ``ChangeSet`` the writer
builds (``ChangeSet.from_transitions``), for the same subscribers.

One lock orders the two sources. While the writer is between its ``BEGIN`` and
the delivery of its change-sets a poll reads nothing (it would take the fresh
commit for another process's); the writer, before delivering its own change-set,
delivers the other processes' events committed before it. Every event is thus
delivered once, in event order, and the writer's change-sets move the same "last
delivered event" mark the poll reads from.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Generator
from contextlib import contextmanager
from typing import Any, cast

from mama_core.errors import MamaError
from mama_core.json_types import JsonObject
from mama_core.model import ChangeSet
from mama_core.store import sqlcipher
from mama_core.store.connection import Connection

log = logging.getLogger(__name__)

Subscriber = Callable[[ChangeSet], None]
Watcher = Callable[[], None]


def changes_of_event(row: tuple[Any, ...]) -> ChangeSet:
    """The change-set of one event row ``(id, action, command_id, payload)``."""
    event_id, action, command_id, payload_json = row
    loaded: Any = json.loads(payload_json)
    payload = cast(JsonObject, loaded) if isinstance(loaded, dict) else {}
    transitions = payload.get("transitions")
    touched = payload.get("touched")
    return ChangeSet.from_transitions(
        int(event_id),
        str(action),
        None if command_id is None else str(command_id),
        transitions if isinstance(transitions, list) else [],  # pyright: ignore[reportUnknownArgumentType]
        touched if isinstance(touched, list) else [],  # pyright: ignore[reportUnknownArgumentType]
    )


class CommitFeed:
    """Change-sets of every commit, delivered to subscribers in event order.

    With ``poll_seconds`` None only this process's commits are delivered (no
    thread, no extra connection): for short-lived commands.
    """

    def __init__(
        self,
        open_reader: Callable[[], Connection] | None = None,
        poll_seconds: float | None = None,
    ) -> None:
        self._open_reader = open_reader
        self._poll_seconds = poll_seconds if open_reader is not None else None
        # Re-entrant: a subscriber may subscribe (e.g. make the engine's recall) while
        # a change-set is being delivered to it.
        self._lock = threading.RLock()
        self._subscribers: list[Subscriber] = []
        self._watchers: list[Watcher] = []
        self._conn: Connection | None = None
        self._data_version: int | None = None
        self._last_event_id = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_problem: str | None = None
        self._writing = 0

    # --- what callers use -------------------------------------------------

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback`` with every committed change-set (on the writer thread for
        this process's commits, on the feed's thread for other processes'); returns a
        function that unsubscribes. Starts following other processes."""
        with self._lock:
            self._subscribers.append(callback)
            self._start()

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def watch(self, callback: Watcher) -> Callable[[], None]:
        """Call ``callback`` (on the feed's thread) after any commit by another
        connection, logged or not: for state kept outside the event log, such as
        the runtime's pause flag. Returns a function that stops watching."""
        with self._lock:
            self._watchers.append(callback)
            self._start()

        def unwatch() -> None:
            with self._lock:
                if callback in self._watchers:
                    self._watchers.remove(callback)

        return unwatch

    @property
    def following(self) -> bool:
        """Whether commits of other processes are being followed."""
        return self._thread is not None and self._thread.is_alive()

    # --- the writer's side ------------------------------------------------

    @contextmanager
    def writing(self) -> Generator[None, None, None]:
        """Around the writer's transaction and the publishing of its change-sets, so a
        poll never mistakes this process's fresh commit for another's. The lock is
        not held meanwhile: a mutation may subscribe (make the recall) inside it."""
        with self._lock:
            self._writing += 1
        try:
            yield
        finally:
            with self._lock:
                self._writing -= 1

    def publish(self, changes: ChangeSet) -> None:
        """Deliver the writer's own change-set, after any other process's events that
        were committed before it and not yet delivered."""
        with self._lock:
            if self._conn is not None and changes.event_ids:
                try:
                    self._catch_up(before=min(changes.event_ids))
                except sqlcipher.Error as exc:
                    self._problem(exc)
                self._last_event_id = max(self._last_event_id, *changes.event_ids)
            self._deliver(changes)

    # --- following other processes ------------------------------------------

    def poll(self) -> bool:
        """Deliver what other connections committed since the last look; True if
        anything was committed (``data_version`` moved)."""
        with self._lock:
            conn = self._conn
            if conn is None or self._writing:
                return False  # while the writer is at it, its publish catches up
            version = int(conn.execute("PRAGMA data_version").fetchone()[0])
            if version == self._data_version:
                return False
            self._catch_up()
            self._data_version = version  # only once read: a failed read is retried
            watchers = list(self._watchers)
        for watcher in watchers:
            try:
                watcher()
            except Exception:
                log.exception("a commit watcher failed")
        return True

    def close(self) -> None:
        """Stop following and close the feed's connection (subscribers stay)."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        with self._lock:
            self._thread = None
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # --- inside -------------------------------------------------------------

    def _start(self) -> None:
        """Open the feed's connection and start polling (under the lock, once); if the
        store cannot be read now, the next subscriber tries again."""
        if self._poll_seconds is None or self._open_reader is None:
            return
        if self._conn is not None or self._stop.is_set():
            return
        try:
            conn = self._open_reader()
        except MamaError as exc:
            log.warning("cannot follow other processes' commits: %s", exc.message)
            return  # this process's own commits are still delivered
        try:
            self._data_version = int(conn.execute("PRAGMA data_version").fetchone()[0])
            row = conn.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()
        except sqlcipher.Error as exc:
            conn.close()
            self._problem(exc)
            return
        self._last_event_id = int(row[0])
        self._conn = conn
        self._thread = threading.Thread(
            target=self._run, args=(self._poll_seconds,), name="mama-commit-feed", daemon=True
        )
        self._thread.start()

    def _run(self, every: float) -> None:
        while not self._stop.wait(every):
            try:
                self.poll()
            except sqlcipher.Error as exc:
                self._problem(exc)
            except Exception:
                log.exception("following other processes' commits failed")

    def _catch_up(self, before: int | None = None) -> None:
        """Deliver the events after the last delivered one (and before ``before``)."""
        assert self._conn is not None
        sql = "SELECT id, action, command_id, payload FROM events WHERE id > ?"
        params: list[int] = [self._last_event_id]
        if before is not None:
            sql += " AND id < ?"
            params.append(before)
        rows = self._conn.execute(sql + " ORDER BY id", params).fetchall()
        for row in rows:
            try:
                changes = changes_of_event(row)
            except (ValueError, KeyError, TypeError):
                log.warning("event %s has an unreadable payload; not delivered", row[0])
                self._last_event_id = int(row[0])
                continue
            self._last_event_id = int(row[0])
            self._deliver(changes)
        self._last_problem = None

    def _deliver(self, changes: ChangeSet) -> None:
        for callback in list(self._subscribers):
            try:
                callback(changes)
            except Exception:
                log.exception("a change subscriber failed")

    def _problem(self, exc: sqlcipher.Error) -> None:
        """Log a store error once (not every poll) and keep following."""
        text = str(exc)
        if text != self._last_problem:
            self._last_problem = text
            log.warning("could not read other processes' commits: %s", text)
