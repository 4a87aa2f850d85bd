"""The one writer: every mutation is appended here, in one transaction, on one thread.

``append`` is the only function that changes the memory's records and their history
(migrations aside). Other writes to the same file hold no judgment and no event: the
vector catch-up (``recall.reembed``) adds another model's vectors of texts already
recorded, ``purge_pending`` keeps a purge's progress in ``runtime_state``, and the app
keeps its own tables (``app/durable``: mailbox, journal, connector items, state).
In a single ``BEGIN IMMEDIATE`` ``append`` checks the command id (replay or conflict), runs
the mutation's own checks and writes (rows, bindings, edges, status changes,
vectors), stores the receipt and appends exactly one hash-chained event that
records the keyed digest of every row it wrote (``coverage``). Any failure
rolls everything back. ``Writer`` runs ``append`` on a dedicated thread
that owns the store's write connection.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

from mama_core import clock
from mama_core.errors import CommandConflictError, MamaError
from mama_core.json_types import JsonObject
from mama_core.memory.commit_feed import CommitFeed
from mama_core.memory.coverage import written_rows
from mama_core.memory.events import EVENT_FORMAT, ChainHead, Event, chain_head, insert_event
from mama_core.model import ChangeSet, content_fields
from mama_core.receipt import Receipt
from mama_core.scopes.grants import Grant
from mama_core.session import SessionFacts
from mama_core.store import sqlcipher
from mama_core.store.connection import Connection, log_failure, translate_error
from mama_core.store.secret import StoreSecret

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class Applied:
    """What a mutation did: its main record, the event payload, extra receipt fields."""

    judgment_id: int | None
    payload: dict[str, Any]
    receipt: dict[str, Any] = field(default_factory=dict[str, Any])


class Tx:
    """One mutation's view of its open transaction: the connection, the event id
    reserved for it, its timestamp, and the ids it touches."""

    def __init__(
        self,
        conn: Connection,
        event_id: int,
        at: str,
        session: SessionFacts,
        grant: Grant,
        command_id: str,
        secret: StoreSecret,
    ) -> None:
        self.conn = conn
        self.secret = secret
        self.command_id = command_id
        self.event_id = event_id
        self.at = at
        self.session = session
        self.grant = grant
        self.transitions: list[dict[str, Any]] = []
        self.touched: set[int] = set()
        self.written: dict[str, set[str]] = {}

    def keyed_hash(self, value: Any) -> str:
        """The store's keyed hash (HMAC) of ``value``: what the log keeps of erasable text."""
        return self.secret.hash(value)

    def wrote(self, table: str, key: object) -> None:
        """Note a row this mutation changed that carries no ``event_id`` of it, so the
        event records its new digest (rows naming the event are found by themselves)."""
        self.written.setdefault(table, set()).add(str(key))

    def record_text(self, field: str, text: str) -> str:
        """Keep ``text`` (a reason) beside the event, outside the chain, so a purge can
        erase it; return its keyed hash, which is what the event records."""
        self.conn.execute(
            "INSERT INTO event_texts (event_id, field, text) VALUES (?, ?, ?)",
            (self.event_id, field, text),
        )
        return self.keyed_hash(text)

    def append_judgment(
        self,
        *,
        kind: str,
        topic: str,
        summary: str,
        details: str,
        applies_when: str | None,
        steps: Sequence[str],
        confidence: float | None,
        status: str,
        valid_from: str,
        provenance: JsonObject,
        involvement: str,
    ) -> tuple[int, str]:
        """Insert a new judgment recorded now by this command (the one ``INSERT INTO
        judgments``); its id and content hash, keyed so a purge leaves no
        brute-forceable hash. The caller binds its scopes and notes it (``record_added``)."""
        content = content_fields(
            kind=kind,
            topic=topic,
            summary=summary,
            details=details,
            applies_when=applies_when,
            steps=list(steps),
            confidence=confidence,
            valid_from=valid_from,
            recorded_at=self.at,
            provenance=provenance,
            command_id=self.command_id,
        )
        digest = self.keyed_hash(content)
        cursor = self.conn.execute(
            "INSERT INTO judgments (kind, topic, summary, details, applies_when, steps, "
            "confidence, status, valid_from, recorded_at, provenance, involvement, command_id, "
            "content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                kind,
                topic,
                summary,
                details,
                applies_when,
                json.dumps(list(steps)) if steps else None,
                confidence,
                status,
                valid_from,
                self.at,
                json.dumps(provenance, sort_keys=True),
                involvement,
                self.command_id,
                digest,
            ),
        )
        judgment_id = int(cursor.lastrowid or 0)
        # Derived, like the full-text rows: lets a save find these exact words by one
        # index lookup (``restatements``); gone again when the record is purged.
        self.conn.execute(
            "INSERT INTO said_keys (judgment_id, said_key) VALUES (?, ?)",
            (judgment_id, self.secret.said_key(summary, applies_when)),
        )
        return judgment_id, digest

    def add_edge(self, src_id: int, dst_id: int, kind: str, reason: str | None = None) -> int:
        """Relate two judgments by this command's event (the one ``INSERT INTO edges``);
        the edge's id."""
        cursor = self.conn.execute(
            "INSERT INTO edges (src_id, dst_id, kind, reason, created_at, event_id) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (src_id, dst_id, kind, reason, self.at, self.event_id),
        )
        return int(cursor.lastrowid or 0)

    def record_added(self, judgment_id: int, status: str, involvement: str) -> None:
        """Note a new judgment and its first status (for the event and the timeline)."""
        self.touched.add(judgment_id)
        self.wrote("scope_bindings", judgment_id)
        self.transitions.append(
            {"id": judgment_id, "from": None, "to": status, "involvement": involvement}
        )

    def change_status(self, judgment_id: int, old: str, new: str, **columns: Any) -> None:
        """Set a judgment's status (and columns such as ``superseded_by``), noting the
        transition in the event so the status can be rebuilt from the log."""
        assignments = ", ".join(["status = ?", *(f"{c} = ?" for c in columns)])
        self.conn.execute(
            f"UPDATE judgments SET {assignments} WHERE id = ?",
            (new, *columns.values(), judgment_id),
        )
        if new == "purged":  # the text is erased (a record's text changes only so)
            self.conn.execute("DELETE FROM said_keys WHERE judgment_id = ?", (judgment_id,))
        transition: dict[str, Any] = {"id": judgment_id, "from": old, "to": new}
        for name in ("valid_until", "involvement", "superseded_by"):
            if name in columns:
                transition[name] = columns[name]
        self.transitions.append(transition)
        self.touched.add(judgment_id)

    def set_outcome(self, judgment_id: int, outcome: str) -> None:
        """Record how a judgment turned out (it stays what it was)."""
        self.conn.execute("UPDATE judgments SET outcome = ? WHERE id = ?", (outcome, judgment_id))
        self.touched.add(judgment_id)

    def touch(self, judgment_id: int) -> None:
        self.touched.add(judgment_id)


@dataclass(frozen=True)
class Command:
    """A mutation ready to append: identity, idempotency key and its ``apply``."""

    action: str
    command_id: str
    payload_hash: str
    session: SessionFacts
    grant: Grant
    apply: Callable[[Tx], Applied]
    after_commit: Callable[[Connection], dict[str, Any] | None] | None = None
    """Run on the writer's connection after the commit; a dict it returns is added to
    the receipt handed back (not to the stored one, which was written before)."""


HeadSink = Callable[[ChainHead], None]
"""Told the chain head after each commit (e.g. to keep an anchor outside the file)."""


@dataclass(frozen=True)
class AppendResult:
    """The receipt, and the change-set if something was committed (None on replay)."""

    receipt: Receipt
    changes: ChangeSet | None


def append(conn: Connection, path: Path, command: Command, secret: StoreSecret) -> AppendResult:
    """Apply ``command`` in one ``BEGIN IMMEDIATE`` transaction; all or nothing."""
    return append_batch(conn, path, [command], secret)[0]


def append_batch(
    conn: Connection,
    path: Path,
    commands: list[Command],
    secret: StoreSecret,
    on_begin: Callable[[], None] | None = None,
) -> list[AppendResult]:
    """Apply ``commands`` in order in ONE transaction: each gets its own event and
    receipt, and if any fails none is written (an import is all or nothing).
    ``on_begin`` is told when the transaction has begun (state kept for one
    transaction, e.g. the saves it wrote, starts empty).

    One commit (one fsync) for many records is what makes a bulk import fast.
    """
    results: list[AppendResult] = []
    try:
        conn.execute("BEGIN IMMEDIATE")
        if on_begin is not None:
            on_begin()
        conn.execute("PRAGMA defer_foreign_keys = ON")
        for command in commands:
            results.append(_apply(conn, command, secret))
        conn.execute("COMMIT")
    except BaseException as exc:
        _rollback(conn)
        if isinstance(exc, sqlcipher.Error):
            raise translate_error(exc, path) from exc
        raise
    return results


def _apply(conn: Connection, command: Command, secret: StoreSecret) -> AppendResult:
    """One command inside the open transaction: replay, or row(s) + receipt + event."""
    stored = conn.execute(
        "SELECT principal, action, payload_hash, receipt FROM receipts WHERE command_id = ?",
        (command.command_id,),
    ).fetchone()
    # The request's hash is kept keyed: a bare hash of a short request (a PIN to
    # remember) could be recovered by trying every value.
    payload_hash = secret.hash_bytes(command.payload_hash.encode("ascii"))
    if stored is not None:
        return AppendResult(_replay(command, stored, payload_hash), None)
    head = chain_head(conn)
    at = clock.iso(clock.now())
    if head.at is not None and at <= head.at:
        at = clock.after(head.at)
    tx = Tx(conn, head.id + 1, at, command.session, command.grant, command.command_id, secret)
    applied = command.apply(tx)
    touched = sorted(tx.touched)
    status = None
    if applied.judgment_id is not None:
        row = conn.execute(
            "SELECT status FROM judgments WHERE id = ?", (applied.judgment_id,)
        ).fetchone()
        status = None if row is None else str(row[0])
    receipt = Receipt(
        command_id=command.command_id,
        action=command.action,
        event_id=tx.event_id,
        at=at,
        judgment_id=applied.judgment_id,
        status=status,
        touched=tuple(touched),
        replayed=False,
        extra=MappingProxyType(dict(applied.receipt)),
    )
    conn.execute(
        "INSERT INTO receipts (command_id, principal, action, payload_hash, receipt, "
        "event_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            command.command_id,
            command.session.principal,
            command.action,
            payload_hash,
            receipt.stored_json(),
            tx.event_id,
            at,
        ),
    )
    for judgment_id in touched:
        tx.wrote("judgments", judgment_id)
    payload = {
        **applied.payload,
        "transitions": tx.transitions,
        "touched": touched,
        "format": EVENT_FORMAT,
        "rows": written_rows(conn, secret, tx.event_id, tx.written),
    }
    event = Event(
        id=tx.event_id,
        at=at,
        action=command.action,
        actor=command.session.actor_json(),
        command_id=command.command_id,
        judgment_id=applied.judgment_id,
        payload=payload,
        prev_hash=head.hash,
    )
    insert_event(conn, event)
    changes = ChangeSet.from_transitions(
        tx.event_id, command.action, command.command_id, tx.transitions, touched
    )
    return AppendResult(receipt, changes)


def _replay(command: Command, stored: tuple[Any, ...], keyed_hash: str) -> Receipt:
    principal, action, payload_hash, receipt_json = stored
    # Receipts written before the hashes were keyed hold the bare payload hash.
    same_payload = payload_hash in (keyed_hash, command.payload_hash)
    if not same_payload or (principal, action) != (command.session.principal, command.action):
        raise CommandConflictError(
            f"Command id {command.command_id} was already used for a different request; "
            "use a new command id.",
            details={"command_id": command.command_id},
        )
    return Receipt.replay_of(receipt_json)


def _rollback(conn: Connection) -> None:
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlcipher.Error:
            log.exception("rollback failed")


class Writer:
    """The dedicated writer thread that owns the store's write connection; its
    change-sets go out through ``feed`` (with other processes' commits, in order)."""

    def __init__(
        self,
        conn: Connection,
        path: Path,
        secret: StoreSecret,
        feed: CommitFeed | None = None,
        on_head: HeadSink | None = None,
        on_begin: Callable[[], None] | None = None,
    ) -> None:
        self._conn = conn
        self._path = path
        self._secret = secret
        self._on_head = on_head
        self._on_begin = on_begin
        self._thread_id: int | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mama-writer")
        self.feed = feed or CommitFeed()

    def submit(self, command: Command) -> Future[AppendResult]:
        """Queue ``command``; the future resolves to its receipt once committed."""
        return self._executor.submit(lambda: self._run_batch([command])[0])

    def submit_batch(self, commands: list[Command]) -> Future[list[AppendResult]]:
        """Queue ``commands`` to commit together (all or nothing), in order."""
        return self._executor.submit(self._run_batch, list(commands))

    def run(self, work: Callable[[Connection], T]) -> Future[T]:
        """Run ``work`` on the writer thread with its connection, between commands
        (post-commit housekeeping such as a retried WAL checkpoint)."""
        return self._executor.submit(work, self._conn)

    def close(self) -> None:
        """Finish queued mutations and stop the thread."""
        self._executor.shutdown(wait=True)

    def on_writer_thread(self) -> bool:
        """Whether the caller runs on the writer thread (e.g. a change-set subscriber
        told of this writer's own commit, which may read with the writer's connection)."""
        return self._thread_id == threading.get_ident()

    def _run_batch(self, commands: list[Command]) -> list[AppendResult]:
        self._thread_id = threading.get_ident()
        with self.feed.writing():
            results = append_batch(self._conn, self._path, commands, self._secret, self._on_begin)
            for index, (command, result) in enumerate(zip(commands, results, strict=True)):
                if result.changes is None:
                    continue
                if command.after_commit is not None:
                    try:
                        extra = command.after_commit(self._conn)
                    except (MamaError, sqlcipher.Error, OSError) as exc:
                        log_failure(
                            log, f"post-commit step of {command.action} failed", exc, self._path
                        )
                    else:
                        if extra:
                            results[index] = replace(
                                result, receipt=result.receipt.with_after(extra)
                            )
                self.feed.publish(result.changes)
            if self._on_head is not None and any(r.changes is not None for r in results):
                try:
                    self._on_head(chain_head(self._conn))
                except Exception as exc:
                    log_failure(
                        log, "keeping the chain anchor outside the store failed", exc, self._path
                    )
        return results
