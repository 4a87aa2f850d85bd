"""Canonical JSON (RFC 8785) and the hashes built on it.

Payload hashes, content hashes and the event chain all hash the same canonical
form, so two equal values always hash alike whatever their key order.
"""

from __future__ import annotations

import hashlib
from typing import Any

from mama_core.store import canonical_json


def canonical(value: Any) -> bytes:
    """RFC 8785 canonical JSON bytes of ``value``."""
    return canonical_json.dumps(value)


def sha256_hex(data: bytes | str) -> str:
    """Hex sha256 of bytes (or of a string's UTF-8)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def canonical_hash(value: Any) -> str:
    """sha256 over the canonical JSON of ``value``."""
    return sha256_hex(canonical(value))
