"""The delivery journal: every message for the owner is written down before it is sent.

A reply is journalled in the same transaction that completes its input (see
``Mailbox.complete``); a proposal card once per judgment; a notice once per
key. The sender takes the oldest queued row (marking it ``sending``), lets the
channel split it into parts, and records each part as sent before the next.
A failure that surely did not deliver (no connection, a rate limit) puts the
row back in the queue after a delay, so nothing is lost while offline.

A part caught in flight by a crash may or may not have reached the owner: at
start-up it is counted as ``parts_uncertain`` and skipped, and the remaining
parts go out — the owner never gets the same message twice. Rows leave the
queue strictly in order, so replies never overtake each other.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from app.durable.clock import Clock, SystemClock, stamp, unstamp
from app.durable.transaction import RuntimeDb
from mama_core.memory.observations import IfHeld, NewObservation, record_observation
from mama_core.store.connection import Connection


class DeliveryKind(StrEnum):
    REPLY = "reply"
    PROPOSAL = "proposal"
    NOTICE = "notice"


class DeliveryState(StrEnum):
    QUEUED = "queued"
    SENDING = "sending"
    SENT = "sent"
    UNCERTAIN = "uncertain"
    FAILED = "failed"


@dataclass(frozen=True)
class Delivery:
    """One message to send: text (replies and notices) or a judgment (proposal cards;
    with ``input_id``, the one card for all a source-delta turn proposed)."""

    id: int
    kind: DeliveryKind
    text: str
    judgment_id: int | None
    input_id: int | None
    parts_sent: int
    attempts: int
    input_meta: dict[str, Any]
    key: str = ""
    """Its de-duplication key: ``change:<id>`` for the card of a proposed change (with
    no judgment, a change proposed to the owner's settings)."""


def journal_reply(conn: Connection, input_id: int, observation_id: int, now: str) -> int:
    """Queue the reply to input ``input_id`` (its text is observation ``observation_id``)
    on ``conn``'s open transaction: ``Mailbox.complete`` journals it as it finishes the
    input. The delivery's id."""
    cur = conn.execute(
        "INSERT INTO deliveries (kind, input_id, observation_id, dedup_key, state, "
        "available_at, created_at) VALUES ('reply', ?, ?, ?, 'queued', ?, ?)",
        (input_id, observation_id, f"reply:{input_id}", now, now),
    )
    return int(cur.lastrowid or 0)


def journal_card(conn: Connection, input_id: int, judgment_id: int, now: str) -> int | None:
    """Queue the review card of ``judgment_id`` proposed in the turn of input ``input_id``,
    on ``conn``'s open transaction (with the reply); None if it was queued before."""
    cur = conn.execute(
        "INSERT INTO deliveries (kind, input_id, judgment_id, dedup_key, state, "
        "available_at, created_at) VALUES ('proposal', ?, ?, ?, 'queued', ?, ?) "
        "ON CONFLICT (dedup_key) DO NOTHING",
        (input_id, judgment_id, f"card:{input_id}:{judgment_id}", now, now),
    )
    return int(cur.lastrowid or 0) if cur.rowcount else None


def sent_observation(conn: Connection, external_ref: str) -> tuple[int, bool] | None:
    """The observation (reply or notice text) of the first delivery sent as message
    ``external_ref``, and whether it was purged; None if there is none."""
    row = conn.execute(
        "SELECT o.id, o.purged_at FROM deliveries d JOIN observations o "
        "ON o.id = d.observation_id WHERE d.external_ref = ? ORDER BY d.id LIMIT 1",
        (external_ref,),
    ).fetchone()
    return None if row is None else (int(row[0]), row[1] is not None)


def sent_card_judgment(conn: Connection, external_ref: str) -> int | None:
    """The judgment on the first card sent as message ``external_ref``, if any."""
    row = conn.execute(
        "SELECT judgment_id FROM deliveries WHERE external_ref = ? "
        "AND judgment_id IS NOT NULL ORDER BY id LIMIT 1",
        (external_ref,),
    ).fetchone()
    return None if row is None else int(row[0])


def sent_cards(conn: Connection, judgment_id: int) -> list[tuple[str, str]]:
    """The review cards sent that showed ``judgment_id``: (message reference, sent at)."""
    rows = conn.execute(
        "SELECT external_ref, sent_at FROM deliveries WHERE kind = 'proposal' "
        "AND judgment_id = ? AND external_ref IS NOT NULL AND sent_at IS NOT NULL",
        (judgment_id,),
    ).fetchall()
    return [(str(ref), str(sent_at)) for ref, sent_at in rows]


def reply_observations(conn: Connection, input_observation_ids: Sequence[int], /) -> list[int]:
    """The observations of what was sent back (a reply or notice text) for the inputs
    whose observations are ``input_observation_ids``: the engine's ``ReplyReader``, so
    ``memory.quotes`` finds a turn's answer without the core naming these tables."""
    ids = list(input_observation_ids)
    if not ids:
        return []
    marks = ", ".join("?" for _ in ids)
    rows = conn.execute(
        "SELECT d.observation_id FROM deliveries d JOIN mailbox m ON m.id = d.input_id "
        f"WHERE m.observation_id IN ({marks}) AND d.observation_id IS NOT NULL",
        ids,
    ).fetchall()
    return [int(r[0]) for r in rows]


class DeliveryJournal:
    """The queue of messages for the owner, and what became of each."""

    def __init__(self, db: RuntimeDb, clock: Clock | None = None) -> None:
        self.db = db
        self.clock: Clock = clock or SystemClock()

    # --- queueing -------------------------------------------------------

    def enqueue_proposal(
        self, judgment_id: int | None, key: str | None = None, group_input: int | None = None
    ) -> int | None:
        """Queue the review card of a new proposal (or, with ``key``, of a change
        proposed to judgment ``judgment_id``, or to the owner's settings when it is None;
        with ``group_input``, of everything the turn of that source-delta input
        proposed); None if it was queued before."""
        now = stamp(self.clock.now())
        with self.db.write() as conn:
            cur = conn.execute(
                "INSERT INTO deliveries (kind, judgment_id, input_id, dedup_key, state, "
                "available_at, created_at) VALUES ('proposal', ?, ?, ?, 'queued', ?, ?) "
                "ON CONFLICT (dedup_key) DO NOTHING",
                (judgment_id, group_input, key or f"proposal:{judgment_id}", now, now),
            )
            return int(cur.lastrowid or 0) if cur.rowcount else None

    def enqueue_notice(self, key: str, text: str) -> int | None:
        """Queue a notice (its text kept as an observation); None if ``key`` was used."""
        now = stamp(self.clock.now())
        with self.db.write() as conn:
            exists = conn.execute(
                "SELECT 1 FROM deliveries WHERE dedup_key = ?", (f"notice:{key}",)
            ).fetchone()
            if exists:
                return None
            observation_id = record_observation(
                conn, NewObservation("mama:notice", key, "mama", text, now), if_held=IfHeld.REUSE
            )
            cur = conn.execute(
                "INSERT INTO deliveries (kind, observation_id, dedup_key, state, available_at, "
                "created_at) VALUES ('notice', ?, ?, 'queued', ?, ?)",
                (observation_id, f"notice:{key}", now, now),
            )
            return int(cur.lastrowid or 0)

    # --- sending --------------------------------------------------------

    def take_next(self) -> Delivery | None:
        """The oldest queued delivery if it is due, marked ``sending``; else None."""
        now = stamp(self.clock.now())
        with self.db.write() as conn:
            # A message whose text the owner purged before it went out is never sent.
            conn.execute(
                "UPDATE deliveries SET state = 'failed', "
                "last_error = 'purged by the owner before it was sent' "
                "WHERE state = 'queued' AND observation_id IN "
                "(SELECT id FROM observations WHERE purged_at IS NOT NULL)"
            )
            row = conn.execute(
                "SELECT d.id, d.kind, coalesce(o.text, ''), d.judgment_id, d.input_id, "
                "d.parts_sent, d.attempts, coalesce(m.meta, '{}'), d.available_at, d.dedup_key "
                "FROM deliveries d LEFT JOIN observations o ON o.id = d.observation_id "
                "LEFT JOIN mailbox m ON m.id = d.input_id "
                "WHERE d.state = 'queued' ORDER BY d.id LIMIT 1"
            ).fetchone()
            if row is None or str(row[8]) > now:
                return None
            conn.execute(
                "UPDATE deliveries SET state = 'sending', attempts = attempts + 1 WHERE id = ?",
                (int(row[0]),),
            )
            return Delivery(
                id=int(row[0]),
                kind=DeliveryKind(str(row[1])),
                text=str(row[2]),
                judgment_id=None if row[3] is None else int(row[3]),
                input_id=None if row[4] is None else int(row[4]),
                parts_sent=int(row[5]),
                attempts=int(row[6]) + 1,
                input_meta=json.loads(str(row[7])),
                key=str(row[9]),
            )

    def part_sent(self, delivery_id: int, part: int, external_ref: str) -> None:
        """Part ``part`` (0-based) reached the channel."""
        with self.db.write() as conn:
            conn.execute(
                "UPDATE deliveries SET parts_sent = ?, external_ref = ? WHERE id = ?",
                (part + 1, external_ref, delivery_id),
            )

    def finish(self, delivery_id: int) -> DeliveryState:
        """Every part is done: ``sent``, or ``uncertain`` if a crash caught one in flight."""
        now = stamp(self.clock.now())
        with self.db.write() as conn:
            conn.execute(
                "UPDATE deliveries SET state = CASE WHEN parts_uncertain > 0 THEN 'uncertain' "
                "ELSE 'sent' END, sent_at = ?, last_error = NULL WHERE id = ?",
                (now, delivery_id),
            )
            row = conn.execute(
                "SELECT state FROM deliveries WHERE id = ?", (delivery_id,)
            ).fetchone()
        return DeliveryState(str(row[0]))

    def retry_later(self, delivery_id: int, error: str, delay: timedelta) -> datetime:
        """Back in the queue (the failed part surely was not delivered), due after ``delay``."""
        due = self.clock.now() + delay
        with self.db.write() as conn:
            conn.execute(
                "UPDATE deliveries SET state = 'queued', available_at = ?, last_error = ? "
                "WHERE id = ?",
                (stamp(due), error[:2000], delivery_id),
            )
        return due

    def give_up(self, delivery_id: int, error: str) -> None:
        """The channel refused it for good (e.g. the chat is gone); keep the reason."""
        with self.db.write() as conn:
            conn.execute(
                "UPDATE deliveries SET state = 'failed', last_error = ? WHERE id = ?",
                (error[:2000], delivery_id),
            )

    def skip_uncertain_part(self, delivery_id: int, part: int, error: str) -> None:
        """Part ``part`` may have been delivered: count it as done, never send it again."""
        with self.db.write() as conn:
            conn.execute(
                "UPDATE deliveries SET parts_sent = ?, parts_uncertain = parts_uncertain + 1, "
                "last_error = ? WHERE id = ?",
                (part + 1, error[:2000], delivery_id),
            )

    def release_interrupted(self) -> list[int]:
        """At start-up: the part a crash caught in flight is skipped; the rest is queued."""
        now = stamp(self.clock.now())
        with self.db.write() as conn:
            rows = conn.execute("SELECT id FROM deliveries WHERE state = 'sending'").fetchall()
            conn.execute(
                "UPDATE deliveries SET state = 'queued', available_at = ?, "
                "parts_sent = parts_sent + 1, parts_uncertain = parts_uncertain + 1, "
                "last_error = 'interrupted while sending; that part is not sent again' "
                "WHERE state = 'sending'",
                (now,),
            )
        return [int(r[0]) for r in rows]

    # --- what is waiting ------------------------------------------------

    def next_due_at(self) -> datetime | None:
        """When the head of the queue becomes due (None if the queue is empty)."""
        with self.db.read() as conn:
            row = conn.execute(
                "SELECT available_at FROM deliveries WHERE state = 'queued' ORDER BY id LIMIT 1"
            ).fetchone()
        return None if row is None else unstamp(str(row[0]))

    def counts(self) -> dict[str, int]:
        with self.db.read() as conn:
            rows = conn.execute("SELECT state, count(*) FROM deliveries GROUP BY state").fetchall()
        return {str(state): int(n) for state, n in rows}

    def reply_for(self, input_id: int) -> tuple[str, DeliveryState] | None:
        """The reply journalled for an input and its state (for tests and the tray)."""
        with self.db.read() as conn:
            row = conn.execute(
                "SELECT coalesce(o.text, ''), d.state FROM deliveries d "
                "LEFT JOIN observations o ON o.id = d.observation_id "
                "WHERE d.input_id = ? AND d.kind = 'reply'",
                (input_id,),
            ).fetchone()
        return None if row is None else (str(row[0]), DeliveryState(str(row[1])))
