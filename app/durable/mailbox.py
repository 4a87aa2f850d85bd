"""The mailbox: every input the agent must handle, durable, with claim and ack.

An input (an owner message, a source delta, a scheduled report, a native
event) is posted once per source reference; a second post of the same
reference is a duplicate and changes nothing. Its text is kept as an immutable
row of ``observations`` in the same transaction, and the mailbox row only
points at it. Inputs are claimed owner-messages-first, then by due time; a
claimed input is either completed (its replies written to the delivery journal
in the same transaction) or failed, which schedules a retry after 1 min, 5 min,
30 min, 2 h and 12 h and then declares it dead. A claim left behind by a crash
is released at start-up, so the input is delivered again — once per crash,
and never past the same limit.

All SQL, no transport: each operation is one ``BEGIN IMMEDIATE`` on the
runtime's own connection (see ``app.durable.transaction``).
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from app.durable.clock import Clock, SystemClock, stamp, unstamp
from app.durable.evidence import EVIDENCE_KEY, Delivered, delivered_as
from app.durable.journal import journal_card, journal_reply
from app.durable.transaction import RuntimeDb
from mama_core.memory.observations import IfHeld, NewObservation
from mama_core.memory.observations import record_observation as core_record_observation
from mama_core.store.connection import Connection

RETRY_DELAYS: tuple[timedelta, ...] = (
    timedelta(minutes=1),
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=2),
    timedelta(hours=12),
)
"""Wait before the 2nd … 6th attempt; a failure after the last makes the input dead."""

MAX_ATTEMPTS = len(RETRY_DELAYS) + 1


class InputKind(StrEnum):
    """What an input is; decides its priority and the turn kind the agent runs in."""

    OWNER_MESSAGE = "owner_message"
    SOURCE_DELTA = "source_delta"
    SCHEDULED = "scheduled"
    NATIVE_EVENT = "native_event"


PRIORITY: dict[InputKind, int] = {
    InputKind.OWNER_MESSAGE: 0,
    InputKind.NATIVE_EVENT: 1,
    InputKind.SCHEDULED: 2,
    InputKind.SOURCE_DELTA: 3,
}
"""Owner messages first; the rest in this order, then by due time."""


class InputState(StrEnum):
    PENDING = "pending"
    CLAIMED = "claimed"
    DONE = "done"
    DEAD = "dead"


@dataclass(frozen=True)
class NewInput:
    """An input as a transport or connector hands it over."""

    kind: InputKind
    source: str
    external_id: str
    text: str
    author: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def source_ref(self) -> str:
        return f"{self.source}:{self.external_id}"


@dataclass(frozen=True)
class Posted:
    """The mailbox row for a post; ``duplicate`` when the reference was seen before."""

    input_id: int
    observation_id: int
    duplicate: bool


@dataclass(frozen=True)
class ClaimedInput:
    """An input handed to the agent: its text comes from its observation."""

    id: int
    kind: InputKind
    source_ref: str
    observation_id: int
    source: str
    author: str
    text: str
    meta: dict[str, Any]
    attempts: int
    claim_token: str

    @property
    def observation_ref(self) -> str:
        return f"obs:{self.observation_id}"

    @property
    def evidence(self) -> Delivered | None:
        """How outside content came with it (forwarded, quoted), or None: the owner's words."""
        return delivered_as(self.meta)


@dataclass(frozen=True)
class Failure:
    """What a failed attempt led to: a retry at ``retry_at``, or dead."""

    state: InputState
    attempts: int
    retry_at: datetime | None


class StaleClaimError(Exception):
    """The claim was released (a restart) or already finished; the caller must drop it."""


class Mailbox:
    """The durable inputs and their claim/ack/retry life cycle."""

    def __init__(self, db: RuntimeDb, clock: Clock | None = None) -> None:
        self.db = db
        self.clock: Clock = clock or SystemClock()

    # --- posting --------------------------------------------------------

    def post(self, new: NewInput, *, available_at: datetime | None = None) -> Posted:
        """Store ``new`` (and its observation) unless its source reference is known."""
        now = stamp(self.clock.now())
        with self.db.write() as conn:
            row = conn.execute(
                "SELECT id, observation_id FROM mailbox WHERE source_ref = ?", (new.source_ref,)
            ).fetchone()
            if row is not None:
                return Posted(int(row[0]), int(row[1]), duplicate=True)
            observation_id = record_observation(
                conn, new.source, new.external_id, new.author, new.text, now
            )
            due = stamp(available_at) if available_at is not None else now
            input_id = insert_pending(
                conn, new.kind, new.source_ref, observation_id, new.meta, due=due, now=now
            )
            return Posted(input_id, observation_id, duplicate=False)

    # --- the claim life cycle -------------------------------------------

    def claim(self) -> ClaimedInput | None:
        """The next due input (owner messages first), marked claimed; None if none is due."""
        now = stamp(self.clock.now())
        token = secrets.token_hex(8)
        with self.db.write() as conn:
            _drop_purged(conn, now)
            row = conn.execute(
                "SELECT id FROM mailbox WHERE state = 'pending' AND available_at <= ? "
                "ORDER BY priority, available_at, id LIMIT 1",
                (now,),
            ).fetchone()
            if row is None:
                return None
            input_id = int(row[0])
            conn.execute(
                "UPDATE mailbox SET state = 'claimed', attempts = attempts + 1, "
                "claim_token = ?, claimed_at = ? WHERE id = ?",
                (token, now, input_id),
            )
            return _load_claimed(conn, input_id)

    def complete(self, claimed: ClaimedInput, reply: str, cards: tuple[int, ...] = ()) -> list[int]:
        """Finish a claimed input and journal its reply and review cards, in one transaction.

        The reply's text is kept as an observation (so the owner can purge it
        like any input); an empty reply journals nothing. Returns the delivery
        ids. Raises ``StaleClaimError`` if the claim is no longer this one (then
        nothing is written and nothing will be sent).
        """
        now = stamp(self.clock.now())
        with self.db.write() as conn:
            _check_claim(conn, claimed)
            conn.execute(
                "UPDATE mailbox SET state = 'done', finished_at = ?, claim_token = NULL, "
                "last_error = NULL WHERE id = ?",
                (now, claimed.id),
            )
            ids: list[int] = []
            if reply.strip():
                observation_id = record_observation(
                    conn, "mama:reply", str(claimed.id), "mama", reply, now
                )
                ids.append(journal_reply(conn, claimed.id, observation_id, now))
            for judgment_id in cards:
                card = journal_card(conn, claimed.id, judgment_id, now)
                if card is not None:
                    ids.append(card)
            return ids

    def fail(self, claimed: ClaimedInput, error: str) -> Failure:
        """Record a failed attempt: retry after the next backoff step, or dead."""
        now_dt = self.clock.now()
        with self.db.write() as conn:
            attempts = _check_claim(conn, claimed)
            return _schedule_retry(conn, claimed.id, attempts, error, now_dt)

    def release_abandoned(self) -> list[int]:
        """At start-up: claims left by a crashed process go back to pending (or dead).

        Each released input has already counted the crashed attempt, so an input
        that crashes the app again and again ends dead instead of looping.
        """
        now_dt = self.clock.now()
        released: list[int] = []
        with self.db.write() as conn:
            rows = conn.execute(
                "SELECT id, attempts FROM mailbox WHERE state = 'claimed' ORDER BY id"
            ).fetchall()
            for input_id, attempts in rows:
                if int(attempts) >= MAX_ATTEMPTS:
                    _schedule_retry(conn, int(input_id), int(attempts), "interrupted", now_dt)
                    continue
                conn.execute(
                    "UPDATE mailbox SET state = 'pending', claim_token = NULL, available_at = ?, "
                    "last_error = 'interrupted by a restart' WHERE id = ?",
                    (stamp(now_dt), int(input_id)),
                )
                released.append(int(input_id))
        return released

    # --- what is waiting ------------------------------------------------

    def next_due_at(self) -> datetime | None:
        """When the earliest pending input becomes due (maybe already past)."""
        with self.db.read() as conn:
            row = conn.execute(
                "SELECT min(available_at) FROM mailbox WHERE state = 'pending'"
            ).fetchone()
        return None if row is None or row[0] is None else unstamp(str(row[0]))

    def counts(self) -> dict[str, int]:
        """How many inputs are in each state (for the tray and the logs)."""
        with self.db.read() as conn:
            rows = conn.execute("SELECT state, count(*) FROM mailbox GROUP BY state").fetchall()
        return {str(state): int(n) for state, n in rows}

    def state_of(self, input_id: int) -> tuple[InputState, int]:
        """An input's state and how many attempts it has had."""
        with self.db.read() as conn:
            row = conn.execute(
                "SELECT state, attempts FROM mailbox WHERE id = ?", (input_id,)
            ).fetchone()
        if row is None:
            raise KeyError(input_id)
        return InputState(str(row[0])), int(row[1])

    def recent_exchanges(self, limit: int = 5) -> list[tuple[str, str]]:
        """The last ``limit`` answered owner messages and their replies, oldest first.

        Messages that carried forwarded or quoted content are left out: replayed
        as "the owner said", outside text would pass for the owner's words.
        """
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT o.text, coalesce(r.text, '') FROM mailbox m "
                "JOIN observations o ON o.id = m.observation_id "
                "LEFT JOIN deliveries d ON d.input_id = m.id AND d.kind = 'reply' "
                "LEFT JOIN observations r ON r.id = d.observation_id AND r.purged_at IS NULL "
                "WHERE m.kind = 'owner_message' AND m.state = 'done' AND o.purged_at IS NULL "
                "AND json_extract(m.meta, ?) IS NULL "
                "ORDER BY m.id DESC LIMIT ?",
                (f"$.{EVIDENCE_KEY}", limit),
            ).fetchall()
        return [(str(text), str(reply)) for text, reply in reversed(rows)]


def _drop_purged(conn: Connection, now: str) -> None:
    """Inputs whose text the owner purged before the agent took them are done, unseen.

    A connector's source delta names several items (``meta.observations``; its
    ``observation_id`` is only the first): it is dropped once every item is purged,
    and otherwise shows the purged ones as erased."""
    conn.execute(
        "UPDATE mailbox SET state = 'done', finished_at = ?, "
        "last_error = 'purged by the owner before it was handled' "
        "WHERE state = 'pending' AND json_extract(meta, '$.observations') IS NULL "
        "AND observation_id IN (SELECT id FROM observations WHERE purged_at IS NOT NULL)",
        (now,),
    )
    conn.execute(
        "UPDATE mailbox SET state = 'done', finished_at = ?, "
        "last_error = 'purged by the owner before it was handled' "
        "WHERE state = 'pending' AND json_extract(meta, '$.observations') IS NOT NULL "
        "AND NOT EXISTS (SELECT 1 FROM json_each(mailbox.meta, '$.observations') j "
        "JOIN observations o ON o.id = j.value WHERE o.purged_at IS NULL)",
        (now,),
    )


def input_state(conn: Connection, input_id: int) -> tuple[int, str, str] | None:
    """Input ``input_id``'s (id, source reference, state), or None if there is none."""
    row = conn.execute(
        "SELECT id, source_ref, state FROM mailbox WHERE id = ?", (input_id,)
    ).fetchone()
    return None if row is None else (int(row[0]), str(row[1]), str(row[2]))


def input_state_by_ref(conn: Connection, source_ref: str) -> tuple[int, str, str] | None:
    """The (id, source reference, state) of the input posted as ``source_ref``, or None."""
    row = conn.execute(
        "SELECT id, source_ref, state FROM mailbox WHERE source_ref = ?", (source_ref,)
    ).fetchone()
    return None if row is None else (int(row[0]), str(row[1]), str(row[2]))


def input_observation(conn: Connection, source_ref: str) -> tuple[int, bool] | None:
    """The observation of the input posted as ``source_ref`` and whether it was purged;
    None if no input has that reference."""
    row = conn.execute(
        "SELECT o.id, o.purged_at FROM mailbox m JOIN observations o "
        "ON o.id = m.observation_id WHERE m.source_ref = ?",
        (source_ref,),
    ).fetchone()
    return None if row is None else (int(row[0]), row[1] is not None)


def insert_pending(
    conn: Connection,
    kind: InputKind,
    source_ref: str,
    observation_id: int,
    meta: dict[str, Any],
    *,
    due: str,
    now: str,
) -> int:
    """Add a pending input on ``conn``'s open transaction (the one ``INSERT INTO mailbox``);
    its id. ``Mailbox.post`` checks the source reference first; a connector batch posts
    its source delta in the batch's own transaction (``connector_store``)."""
    cur = conn.execute(
        "INSERT INTO mailbox (kind, source_ref, observation_id, priority, meta, state, "
        "available_at, created_at) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)",
        (
            kind.value,
            source_ref,
            observation_id,
            PRIORITY[kind],
            json.dumps(meta, sort_keys=True),
            due,
            now,
        ),
    )
    return int(cur.lastrowid or 0)


def record_observation(
    conn: Connection, source: str, external_id: str, author: str, text: str, at: str
) -> int:
    """The id of the observation (``source``, ``external_id``), inserting it if new.

    An existing observation is never changed: the first text received is the record.
    """
    return core_record_observation(
        conn, NewObservation(source, external_id, author, text, at), if_held=IfHeld.REUSE
    )


def _load_claimed(conn: Connection, input_id: int) -> ClaimedInput:
    row = conn.execute(
        "SELECT m.id, m.kind, m.source_ref, m.observation_id, o.source, o.author, o.text, "
        "m.meta, m.attempts, m.claim_token FROM mailbox m "
        "JOIN observations o ON o.id = m.observation_id WHERE m.id = ?",
        (input_id,),
    ).fetchone()
    return ClaimedInput(
        id=int(row[0]),
        kind=InputKind(str(row[1])),
        source_ref=str(row[2]),
        observation_id=int(row[3]),
        source=str(row[4]),
        author=str(row[5]),
        text=str(row[6]),
        meta=json.loads(row[7]),
        attempts=int(row[8]),
        claim_token=str(row[9]),
    )


def _check_claim(conn: Connection, claimed: ClaimedInput) -> int:
    row = conn.execute(
        "SELECT state, claim_token, attempts FROM mailbox WHERE id = ?", (claimed.id,)
    ).fetchone()
    if row is None or str(row[0]) != "claimed" or row[1] != claimed.claim_token:
        raise StaleClaimError(f"input {claimed.id} is no longer claimed by this worker")
    return int(row[2])


def _schedule_retry(
    conn: Connection, input_id: int, attempts: int, error: str, now: datetime
) -> Failure:
    if attempts >= MAX_ATTEMPTS:
        conn.execute(
            "UPDATE mailbox SET state = 'dead', claim_token = NULL, last_error = ?, "
            "finished_at = ? WHERE id = ?",
            (error[:2000], stamp(now), input_id),
        )
        return Failure(InputState.DEAD, attempts, None)
    retry_at = now + RETRY_DELAYS[attempts - 1]
    conn.execute(
        "UPDATE mailbox SET state = 'pending', claim_token = NULL, last_error = ?, "
        "available_at = ? WHERE id = ?",
        (error[:2000], stamp(retry_at), input_id),
    )
    return Failure(InputState.PENDING, attempts, retry_at)
