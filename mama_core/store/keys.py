"""The database key as a value that never shows itself.

A key is either 32 random bytes (created on first use and kept in the OS
keyring) or a passphrase the owner types where no keyring works; SQLCipher
derives the real key from a passphrase itself. ``repr`` and ``str`` never
contain the secret, so a key cannot leak into a log or an error message.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field

_RAW_KEY = re.compile(r"[0-9a-fA-F]{64}")


@dataclass(frozen=True)
class DbKey:
    """A SQLCipher key: a raw 256-bit key or a passphrase."""

    _secret: str = field(repr=False)
    raw: bool = False

    @classmethod
    def generate(cls) -> DbKey:
        """A new random 256-bit key."""
        return cls(secrets.token_hex(32), raw=True)

    @classmethod
    def from_secret(cls, secret: str) -> DbKey:
        """64 hex digits are a raw key; anything else is a passphrase."""
        if not secret:
            raise ValueError("an empty key is not a key")
        if _RAW_KEY.fullmatch(secret):
            return cls(secret.lower(), raw=True)
        return cls(secret, raw=False)

    def reveal(self) -> str:
        """The secret itself, for storing it in the keyring."""
        return self._secret

    def pragma_value(self) -> str:
        """The SQL literal for ``PRAGMA key = …``."""
        if self.raw:
            return f"\"x'{self._secret}'\""
        return "'" + self._secret.replace("'", "''") + "'"

    def __str__(self) -> str:
        return "DbKey(raw)" if self.raw else "DbKey(passphrase)"
