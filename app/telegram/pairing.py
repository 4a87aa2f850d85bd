"""Pairing: a one-time code shown on the owner's machine binds one chat and user.

``mama telegram pair-code`` (or the tray) makes a code; the owner sends
``/pair CODE`` to the bot in a private chat; that chat and that user become the
owner and every other chat or user is ignored. Codes are short-lived and
stored only as hashes; the first pairing that succeeds invalidates every
outstanding code. While an owner is paired no code is made and no ``/pair``
succeeds: another chat takes over only after the owner unpairs on the machine
(the tray, or ``mama telegram unpair``). Wrong codes are counted per chat in
the store (``runtime_state``); five within fifteen minutes lock that chat out for fifteen minutes,
across restarts.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from app.durable.clock import Clock, SystemClock, stamp, unstamp
from app.durable.transaction import RuntimeDb
from mama_core.errors import MamaError
from mama_core.store.connection import Connection
from mama_core.store.runtime_state import drop_values, put_value

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I
CODE_LENGTH = 8
CODE_TTL = timedelta(minutes=10)
MAX_WRONG_CODES = 5
"""Wrong codes from one chat within ``WRONG_CODE_WINDOW`` before it is locked out."""
WRONG_CODE_WINDOW = timedelta(minutes=15)
LOCKOUT = timedelta(minutes=15)
ATTEMPTS_KEY_PREFIX = "pairing_attempts:"
"""``runtime_state`` keys of the wrong-code counters, one per chat (JSON values)."""


@dataclass(frozen=True)
class PairedOwner:
    chat_id: int
    user_id: int
    username: str
    paired_at: str


class AlreadyPairedError(MamaError):
    """A code was asked for while an owner is paired: unpair first."""

    code = "already_paired"
    exit_code = 54


class PairOutcome(StrEnum):
    """What a ``/pair`` attempt came to."""

    PAIRED = "paired"
    WRONG = "wrong"
    """Wrong, used or expired code (counted towards the lockout)."""
    LOCKED = "locked"
    """Too many wrong codes from this chat; even a right one is refused until it ends."""
    TAKEN = "taken"
    """Another chat is paired; only the owner on the machine can unpair it."""
    ALREADY = "already"
    """This chat and user are the owner already."""
    NOT_PRIVATE = "not_private"
    """A group, supergroup or channel never becomes the owner."""


@dataclass(frozen=True)
class PairResult:
    outcome: PairOutcome
    locked_until: datetime | None = None

    @property
    def paired(self) -> bool:
        return self.outcome is PairOutcome.PAIRED


def normalise_code(text: str) -> str:
    """What the owner typed, without spaces, dashes or case."""
    return "".join(ch for ch in text.upper() if ch.isalnum())


def looks_like_code(text: str) -> bool:
    """True when ``text`` has the shape of a code (whether or not it is one)."""
    code = normalise_code(text)
    return len(code) == CODE_LENGTH and all(ch in CODE_ALPHABET for ch in code)


def _hash(code: str) -> str:
    return hashlib.sha256(normalise_code(code).encode("ascii", "ignore")).hexdigest()


class Pairing:
    """The pairing codes, the wrong-code counters and the paired owner, in the store."""

    def __init__(self, db: RuntimeDb, clock: Clock | None = None) -> None:
        self.db = db
        self.clock: Clock = clock or SystemClock()

    def new_code(self) -> str:
        """A fresh one-time code (shown as XXXX-XXXX), valid for ten minutes.

        Raises ``AlreadyPairedError`` while an owner is paired: a code then could
        only serve a takeover.
        """
        raw = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
        now = self.clock.now()
        with self.db.write() as conn:
            owner = _read_owner(conn)
            if owner is not None:
                raise AlreadyPairedError(
                    f"Telegram is paired with {_who(owner)}. Unpair it first (the tray's "
                    "Pair Telegram window, or `mama telegram unpair`), then make a new code."
                )
            conn.execute("DELETE FROM pairing_codes WHERE expires_at < ?", (stamp(now),))
            conn.execute(
                "INSERT INTO pairing_codes (code_hash, created_at, expires_at) VALUES (?, ?, ?)",
                (_hash(raw), stamp(now), stamp(now + CODE_TTL)),
            )
        return f"{raw[:4]}-{raw[4:]}"

    def redeem(
        self, code: str, chat_id: int, user_id: int, username: str, *, private: bool
    ) -> PairResult:
        """Pair ``chat_id``/``user_id`` if ``code`` is valid, unused and unexpired, the
        chat is private, no owner is paired and the chat is not locked out."""
        now_dt = self.clock.now()
        now = stamp(now_dt)
        with self.db.write() as conn:
            if not private:
                return PairResult(PairOutcome.NOT_PRIVATE)
            owner = _read_owner(conn)
            if owner is not None:
                same = (owner.chat_id, owner.user_id) == (chat_id, user_id)
                return PairResult(PairOutcome.ALREADY if same else PairOutcome.TAKEN)
            locked_until = _locked_until(conn, chat_id, now)
            if locked_until is not None:
                return PairResult(PairOutcome.LOCKED, locked_until)
            match = _matching_code(conn, code, now)
            if match is None:
                return _count_wrong(conn, chat_id, now_dt)
            # The first pairing that succeeds ends every outstanding code.
            conn.execute("DELETE FROM pairing_codes")
            drop_values(conn, [_attempts_key(chat_id)])
            write_owner(conn, chat_id, user_id, username, now)
        return PairResult(PairOutcome.PAIRED)

    def owner(self) -> PairedOwner | None:
        """The paired owner, if any."""
        with self.db.read() as conn:
            return _read_owner(conn)

    def unpair(self) -> PairedOwner | None:
        """Forget the paired owner and any outstanding code; return who it was."""
        with self.db.write() as conn:
            owner = _read_owner(conn)
            delete_owner(conn)
            conn.execute("DELETE FROM pairing_codes")
        return owner


def write_owner(conn: Connection, chat_id: int, user_id: int, username: str, at: str) -> None:
    """The one place the owner row is written (inside the caller's transaction)."""
    conn.execute(
        "INSERT INTO telegram_owner (id, chat_id, user_id, username, paired_at) "
        "VALUES (1, ?, ?, ?, ?)",
        (chat_id, user_id, username, at),
    )


def delete_owner(conn: Connection) -> None:
    """The one place the owner row is removed (inside the caller's transaction)."""
    conn.execute("DELETE FROM telegram_owner")


def _read_owner(conn: Connection) -> PairedOwner | None:
    row = conn.execute(
        "SELECT chat_id, user_id, username, paired_at FROM telegram_owner WHERE id = 1"
    ).fetchone()
    if row is None:
        return None
    return PairedOwner(int(row[0]), int(row[1]), str(row[2]), str(row[3]))


def _who(owner: PairedOwner) -> str:
    return f"@{owner.username}" if owner.username else f"chat {owner.chat_id}"


def _matching_code(conn: Connection, code: str, now: str) -> str | None:
    if not looks_like_code(code):
        return None
    wanted = _hash(code)
    rows = conn.execute(
        "SELECT code_hash FROM pairing_codes WHERE used_at IS NULL AND expires_at >= ?", (now,)
    ).fetchall()
    return next((str(r[0]) for r in rows if hmac.compare_digest(str(r[0]), wanted)), None)


def _attempts_key(chat_id: int) -> str:
    return f"{ATTEMPTS_KEY_PREFIX}{chat_id}"


def _locked_until(conn: Connection, chat_id: int, now: str) -> datetime | None:
    row = conn.execute(
        "SELECT json_extract(value, '$.locked_until') FROM runtime_state WHERE key = ?",
        (_attempts_key(chat_id),),
    ).fetchone()
    if row is None or row[0] is None or str(row[0]) <= now:
        return None
    return unstamp(str(row[0]))


def _count_wrong(conn: Connection, chat_id: int, now: datetime) -> PairResult:
    """Count one wrong code from ``chat_id``; the last one allowed starts a lockout."""
    key = _attempts_key(chat_id)
    row = conn.execute("SELECT value FROM runtime_state WHERE key = ?", (key,)).fetchone()
    seen = json.loads(str(row[0])) if row is not None else {}
    failures, first = 1, now
    if seen and unstamp(str(seen["first_failed_at"])) > now - WRONG_CODE_WINDOW:
        failures, first = int(seen["failures"]) + 1, unstamp(str(seen["first_failed_at"]))
    locked_until = now + LOCKOUT if failures >= MAX_WRONG_CODES else None
    if locked_until is not None:  # the count starts again when the lockout ends
        failures, first = 0, now
    value = {
        "failures": failures,
        "first_failed_at": stamp(first),
        "locked_until": stamp(locked_until) if locked_until is not None else None,
    }
    # Counters of chats that stopped trying long ago are dropped as others are written.
    stale = conn.execute(
        "SELECT key FROM runtime_state WHERE key LIKE ? AND json_extract(value, "
        "'$.first_failed_at') < ? AND coalesce(json_extract(value, '$.locked_until'), '') < ?",
        (f"{ATTEMPTS_KEY_PREFIX}%", stamp(now - WRONG_CODE_WINDOW), stamp(now)),
    ).fetchall()
    drop_values(conn, [str(row[0]) for row in stale])
    put_value(conn, key, json.dumps(value, sort_keys=True))
    if locked_until is not None:
        return PairResult(PairOutcome.LOCKED, locked_until)
    return PairResult(PairOutcome.WRONG)
