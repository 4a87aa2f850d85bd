"""After a purge, the erased text must also leave the WAL and the backups.

A purge marks itself *pending* in its own transaction. Right after the commit
the writer deletes the store's pre-upgrade backups (``backups/<db>.*.bak``, of the
core's migrations and of every series above it, see ``mama_core.store.copies``:
restoring one would bring the text back, and they cannot be rewritten without
the schema they were made with) and truncates the WAL with
``PRAGMA wal_checkpoint(TRUNCATE)``. A reader in another process can block
that checkpoint; then the mark stays, and ``PendingPurgeRetry`` (owned by every
``Engine``: tray, ``mama daemon``, ``mama mcp``) tries again on the writer
thread until it succeeds. A process that exits first (a CLI command) leaves the
mark for the next engine that opens the store. ``mama doctor`` reports it.

The mark lives in ``runtime_state`` (key ``purge_pending``), so it is written
atomically with the purge and needs no schema change.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from mama_core.store import sqlcipher
from mama_core.store.connection import Connection
from mama_core.store.copies import store_backups
from mama_core.store.runtime_state import drop_values, put_value

log = logging.getLogger(__name__)

PENDING_KEY = "purge_pending"
CHECKPOINT_BUSY_TIMEOUT_MS = 100
"""How long one truncating checkpoint waits for readers: short, it runs on the writer."""


@dataclass(frozen=True)
class PendingPurge:
    """A purge whose text may still be in the WAL or a backup."""

    event_id: int
    at: str


def mark_pending(conn: Connection, event_id: int, at: str) -> None:
    """Inside the purge's transaction: note that its WAL and backups are not clean yet."""
    old = pending_purge(conn)
    first_at = old.at if old is not None else at
    put_value(conn, PENDING_KEY, json.dumps({"event_id": event_id, "at": first_at}))


def pending_purge(conn: Connection) -> PendingPurge | None:
    """The pending purge mark, if a purge's text may still be in the WAL or a backup."""
    row = conn.execute("SELECT value FROM runtime_state WHERE key = ?", (PENDING_KEY,)).fetchone()
    if row is None:
        return None
    value = json.loads(str(row[0]))
    return PendingPurge(int(value["event_id"]), str(value["at"]))


def store_file(conn: Connection) -> Path | None:
    """The main database file of ``conn`` (None for an in-memory database)."""
    for _, name, file in conn.execute("PRAGMA database_list").fetchall():
        if name == "main" and file:
            return Path(str(file))
    return None


def backups_of(db_path: Path) -> list[Path]:
    """The pre-upgrade backups made of this store (the core's and every series')."""
    return store_backups(db_path)


def remove_backups(db_path: Path) -> tuple[list[str], list[str]]:
    """Delete the store's backups; return the names removed and the names that failed."""
    removed: list[str] = []
    failed: list[str] = []
    for path in backups_of(db_path):
        try:
            path.unlink()
            removed.append(path.name)
        except FileNotFoundError:
            continue
        except OSError as exc:
            log.warning("could not delete the backup %s after a purge: %s", path, exc)
            failed.append(path.name)
    return removed, failed


def truncate_wal(conn: Connection) -> bool:
    """One truncating checkpoint with a short wait; True if the WAL is now empty."""
    previous = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
    conn.execute(f"PRAGMA busy_timeout = {CHECKPOINT_BUSY_TIMEOUT_MS}")
    try:
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        conn.execute(f"PRAGMA busy_timeout = {previous}")
    return not busy


class Settled(TypedDict):
    """What settling a purge did: a purge receipt's post-commit fields."""

    backups_removed: list[str]
    backups_not_removed: list[str]
    wal: str
    """``truncated``, or ``pending`` while a reader holds the WAL."""
    purge_pending: bool


def settle(conn: Connection) -> Settled:
    """On the writer's connection, outside a transaction: remove backups, truncate the
    WAL, and clear the pending mark when both are done. Returns what happened."""
    db_path = store_file(conn)
    removed, failed = remove_backups(db_path) if db_path is not None else ([], [])
    truncated = truncate_wal(conn)
    done = truncated and not failed
    if done and pending_purge(conn) is not None:
        drop_values(conn, [PENDING_KEY])
        truncate_wal(conn)  # the mark's own page; it holds no erased text
    if not truncated:
        log.warning("a reader holds the WAL after a purge; the truncation will be retried")
    return {
        "backups_removed": removed,
        "backups_not_removed": failed,
        "wal": "truncated" if truncated else "pending",
        "purge_pending": not done,
    }


def settle_if_pending(conn: Connection) -> bool:
    """Finish a pending purge if there is one; True when nothing is pending any more."""
    if pending_purge(conn) is None:
        return True
    return not settle(conn)["purge_pending"]


RunOnWriter = Callable[[Callable[[Connection], bool]], "Future[bool]"]


class PendingPurgeRetry:
    """Retries a pending purge's checkpoint on the writer thread until it succeeds.

    It checks at once (a mark left by a process that exited), then every
    ``watch_seconds`` (a mark left by another process meanwhile), and after a
    ``poke`` (a purge of this engine); while a reader blocks, it retries with a
    growing delay up to ``max_delay``. ``is_pending`` looks for the mark on a
    connection of its own, so the writer's connection is used only when there is
    a purge to finish: an idle engine does no work on it every few seconds, and a
    thread that (wrongly) shares the writer's connection cannot deadlock with a
    check it never asked for.
    """

    def __init__(
        self,
        run_on_writer: RunOnWriter,
        *,
        is_pending: Callable[[], bool] | None = None,
        first_delay: float = 0.25,
        max_delay: float = 4.0,
        watch_seconds: float = 10.0,
    ) -> None:
        self._run = run_on_writer
        self._is_pending = is_pending
        self._first_delay = first_delay
        self._max_delay = max_delay
        self._watch = watch_seconds
        self._wake = threading.Event()
        self._stop = threading.Event()
        self.settled = threading.Event()
        """Set while the last check found nothing pending (tests and doctor wait on it)."""
        self._thread = threading.Thread(
            target=self._loop, name="mama-purge-checkpoint", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def poke(self) -> None:
        """A purge was committed: check again now."""
        self.settled.clear()
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()

    def _loop(self) -> None:
        delay = 0.0
        while True:
            self._wake.wait(delay)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                if self._is_pending is not None and not self._is_pending():
                    done = True
                else:
                    done = self._run(settle_if_pending).result()
            except RuntimeError:
                return  # the writer was shut down
            except (sqlcipher.Error, OSError, ValueError) as exc:
                # A busy or damaged store is no bug: one line, and the next pass retries.
                log.warning("checking for a pending purge failed: %s", exc)
                done = False
            if done:
                self.settled.set()
                delay = self._watch
            else:
                self.settled.clear()
                fresh = delay == 0.0 or delay >= self._watch
                delay = self._first_delay if fresh else min(delay * 2, self._max_delay)
