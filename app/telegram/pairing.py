"""Pairing: a one-time code shown on the owner's machine binds one chat and user.

``mama telegram pair-code`` (or the tray) makes a code; the owner sends
``/pair CODE`` to the bot; that chat and that user become the owner and every
other chat or user is ignored. Codes are short-lived, single-use and stored
only as hashes; a new pairing replaces the old owner.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta

from app.runtime.clock import Clock, SystemClock, stamp
from app.runtime.transaction import RuntimeDb

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I
CODE_LENGTH = 8
CODE_TTL = timedelta(minutes=10)


@dataclass(frozen=True)
class PairedOwner:
    chat_id: int
    user_id: int
    username: str
    paired_at: str


def normalise_code(text: str) -> str:
    """What the owner typed, without spaces, dashes or case."""
    return "".join(ch for ch in text.upper() if ch.isalnum())


def _hash(code: str) -> str:
    return hashlib.sha256(normalise_code(code).encode("ascii", "ignore")).hexdigest()


class Pairing:
    """The pairing codes and the paired owner, in the store."""

    def __init__(self, db: RuntimeDb, clock: Clock | None = None) -> None:
        self.db = db
        self.clock: Clock = clock or SystemClock()

    def new_code(self) -> str:
        """A fresh one-time code (shown as XXXX-XXXX), valid for ten minutes."""
        raw = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
        now = self.clock.now()
        with self.db.write() as conn:
            conn.execute("DELETE FROM pairing_codes WHERE expires_at < ?", (stamp(now),))
            conn.execute(
                "INSERT INTO pairing_codes (code_hash, created_at, expires_at) VALUES (?, ?, ?)",
                (_hash(raw), stamp(now), stamp(now + CODE_TTL)),
            )
        return f"{raw[:4]}-{raw[4:]}"

    def redeem(self, code: str, chat_id: int, user_id: int, username: str) -> bool:
        """Pair ``chat_id``/``user_id`` if ``code`` is valid, unused and unexpired."""
        if len(normalise_code(code)) != CODE_LENGTH:
            return False
        wanted = _hash(code)
        now = stamp(self.clock.now())
        with self.db.write() as conn:
            rows = conn.execute(
                "SELECT code_hash FROM pairing_codes WHERE used_at IS NULL AND expires_at >= ?",
                (now,),
            ).fetchall()
            match = next((str(r[0]) for r in rows if hmac.compare_digest(str(r[0]), wanted)), None)
            if match is None:
                return False
            conn.execute("UPDATE pairing_codes SET used_at = ? WHERE code_hash = ?", (now, match))
            conn.execute(
                "INSERT INTO telegram_owner (id, chat_id, user_id, username, paired_at) "
                "VALUES (1, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET chat_id = excluded.chat_id, "
                "user_id = excluded.user_id, username = excluded.username, "
                "paired_at = excluded.paired_at",
                (chat_id, user_id, username, now),
            )
        return True

    def owner(self) -> PairedOwner | None:
        """The paired owner, if any."""
        with self.db.read() as conn:
            row = conn.execute(
                "SELECT chat_id, user_id, username, paired_at FROM telegram_owner WHERE id = 1"
            ).fetchone()
        if row is None:
            return None
        return PairedOwner(int(row[0]), int(row[1]), str(row[2]), str(row[3]))

    def unpair(self) -> None:
        with self.db.write() as conn:
            conn.execute("DELETE FROM telegram_owner")
