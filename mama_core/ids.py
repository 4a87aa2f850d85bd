"""The range of a row id that any front end accepts.

Ids stop at 2**53 - 1: exact in every JSON reader (JavaScript numbers included)
and far inside SQLite's 64-bit integers, so a bigger one is refused as bad
input instead of overflowing in the database driver. Kept apart from
``mama_core.memory`` so the command line can check an id without loading the
engine.
"""

from __future__ import annotations

MAX_ID = 2**53 - 1


def is_store_id(value: int) -> bool:
    """Whether ``value`` can be the id of a row (1 to ``MAX_ID``)."""
    return 1 <= value <= MAX_ID
