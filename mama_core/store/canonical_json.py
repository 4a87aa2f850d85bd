"""Canonical JSON (RFC 8785), fast: the standard library's C encoder where its bytes
are the canonical bytes, the ``rfc8785`` package everywhere else.

Every hash the store keeps (seals, keyed digests, the event chain) is over these
bytes, and one save hashes a few dozen values: ``rfc8785`` is pure Python and was
a large part of a save's time. For strings, integers in JSON's safe range,
booleans, null, lists and objects whose keys sort the same by code point as by
UTF-16 unit, ``json.dumps`` with sorted keys, no spaces and no ASCII escaping
writes exactly RFC 8785's bytes (the same short escapes and lowercase ``\\u00xx``
for control characters, everything else as UTF-8). Anything else (a float, an
integer beyond 2**53 - 1, another type, a key with a character past U+D7FF, a
lone surrogate) goes to ``rfc8785``, so the bytes, and the errors, are always the
package's. A property test holds the two equal.
"""

from __future__ import annotations

import json
from typing import Any, cast

import rfc8785

_SAFE_INT = 2**53 - 1
_ENCODE = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
).encode
_BMP_BELOW_SURROGATES = "\ud800"


def dumps(value: Any) -> bytes:
    """RFC 8785 canonical JSON bytes of ``value`` (``rfc8785.dumps``'s bytes)."""
    if _plain(value):
        try:
            return _ENCODE(value).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: rfc8785 says what is wrong
            pass
    return rfc8785.dumps(value)


def _plain(value: object) -> bool:
    """Whether ``json`` writes ``value`` exactly as RFC 8785 does."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return -_SAFE_INT <= cast(int, value) <= _SAFE_INT
    if kind is list or kind is tuple:
        return all(_plain(item) for item in cast(list[object], value))
    if kind is dict:
        for key, item in cast(dict[object, object], value).items():
            if type(key) is not str:
                return False
            if not key.isascii() and max(key) >= _BMP_BELOW_SURROGATES:
                return False  # UTF-16 order differs from code point order past here
            if not _plain(item):
                return False
        return True
    return False


__all__ = ["dumps"]
