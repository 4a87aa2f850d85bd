"""The store secret: a per-store key for the keyed hashes the log keeps.

Hashes of text that a purge erases (content, reasons, outcomes, observations)
must not let short text (a PIN, a salary) be recovered by trying every value,
so the log keeps HMAC-SHA256 under this secret instead of a bare sha256. The
secret is derived from the database key (raw key bytes, or the passphrase) and
the store's ``meta.store_id``; it is never written anywhere.

The secret also seals rows that processes write outside the one writer (the
Telegram owner, observations from the mailbox, vectors): SQL triggers call the
``mama_seal(table, values...)`` function registered on every store connection,
so no writer can forget the seal, and ``mama verify`` recomputes it.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any, cast

from mama_core.normal_text import said_normal
from mama_core.store import canonical_json
from mama_core.store.connection import Connection
from mama_core.store.keys import DbKey

_LABEL = b"mama store secret v1\x00"
SEAL_FUNCTION = "mama_seal"
KEYED_FUNCTION = "mama_keyed"
"""``mama_keyed(values...)``: the keyed hash of the values, for SQL that must match a
purged row's erased key (an erased observation's external id) without the text."""
SAID_KEY_FUNCTION = "mama_said_key"
"""``mama_said_key(summary, applies_when)``: a record's ``said_keys`` key (``said_key``),
for the migration that fills that index in an older store."""


class StoreSecret:
    """HMAC-SHA256 under a store's secret; ``repr`` never shows it."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    @classmethod
    def derive(cls, key: DbKey, store_id: str) -> StoreSecret:
        """The secret of the store ``store_id`` opened with ``key``."""
        material = bytes.fromhex(key.reveal()) if key.raw else key.reveal().encode("utf-8")
        digest = hmac.new(material, _LABEL + store_id.encode("ascii"), hashlib.sha256).digest()
        return cls(digest)

    def hash_bytes(self, data: bytes) -> str:
        """Hex HMAC-SHA256 of ``data``."""
        return hmac.new(self._secret, data, hashlib.sha256).hexdigest()

    def hash(self, value: Any) -> str:
        """Hex HMAC-SHA256 of the canonical JSON (RFC 8785) of ``value``."""
        return self.hash_bytes(canonical_json.dumps(value))

    def seal(self, table: str, *values: object) -> str:
        """The seal of one row: the keyed hash of its table name and values (blobs as hex)."""
        plain: list[object] = [
            bytes(cast(bytes, v)).hex() if isinstance(v, bytes | bytearray | memoryview) else v
            for v in values
        ]
        return self.hash([table, *plain])

    def register(self, conn: Connection) -> None:
        """Make ``mama_seal(...)`` available to the seal triggers on ``conn``."""
        conn.create_function(SEAL_FUNCTION, -1, self.seal, deterministic=True)
        conn.create_function(KEYED_FUNCTION, -1, self.keyed, deterministic=True)
        conn.create_function(SAID_KEY_FUNCTION, 2, self.said_key, deterministic=True)

    def keyed(self, *values: object) -> str:
        """The keyed hash of ``values`` (the SQL function ``mama_keyed``)."""
        return self.hash(list(values))

    def said_key(self, summary: str, applies_when: str | None) -> str:
        """The keyed hash of a record's normalised words (``normal_text.said_normal``):
        two records with the same key say exactly the same text."""
        return self.hash_bytes(said_normal(summary, applies_when))

    def __repr__(self) -> str:
        return "StoreSecret(...)"


__all__ = ["KEYED_FUNCTION", "SAID_KEY_FUNCTION", "SEAL_FUNCTION", "StoreSecret"]
