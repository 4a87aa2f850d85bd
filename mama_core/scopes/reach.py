"""A caller's grant applied to scopes: what it may read, where it may write.

A scope name is ``global``, ``user:NAME``, ``channel:NAME`` or
``project:NAME`` (checked in ``mama_core.scopes.names``). ``scope_filter`` turns
a grant into the one scope predicate (``mama_core.scopes.bindings``), so no
query can forget it and it always sits before any LIMIT.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from mama_core.errors import ScopeDeniedError
from mama_core.scopes.bindings import scope_predicate

if TYPE_CHECKING:
    from mama_core.scopes.grants import Grant


def scope_filter(alias: str, grant: Grant) -> tuple[str, list[object]]:
    """SQL predicate limiting judgments ``alias`` to the grant's scopes.

    The owner's grant (``all_scopes``) sees everything; an empty grant sees
    nothing (the predicate is false, not absent).
    """
    if grant.all_scopes:
        return "1", []
    return scope_predicate(alias, grant.scopes)


def read_scopes(grant: Grant, requested: Iterable[str] | None) -> Grant:
    """The grant narrowed to the scopes a read asked for; a foreign scope is refused."""
    if requested is None:
        return grant
    wanted = frozenset(requested)
    _require_within(grant, wanted)
    return grant.narrowed(wanted)


def write_scopes(grant: Grant, requested: Iterable[str] | None) -> tuple[str, ...]:
    """The scopes a write goes to: the requested ones (each granted) or the default."""
    if requested is not None and list(requested):
        wanted = tuple(dict.fromkeys(requested))
    elif grant.default_scope is not None:
        wanted = (grant.default_scope,)
    else:
        raise ScopeDeniedError(
            "No scope to write into: name one with 'scopes'; this caller has no default scope.",
            details={"scopes": []},
        )
    _require_within(grant, frozenset(wanted))
    return wanted


def require_writable(grant: Grant, scopes: Iterable[str], what: str) -> None:
    """Refuse changing a record bound to a scope outside the grant."""
    _require_within(grant, frozenset(scopes), what=what)


def _require_within(grant: Grant, wanted: frozenset[str], what: str = "") -> None:
    if grant.all_scopes:
        return
    outside = sorted(wanted - grant.scopes)
    if outside:
        subject = f" ({what})" if what else ""
        raise ScopeDeniedError(
            f"Scope {', '.join(outside)}{subject} is outside this caller's grant.",
            details={"scopes": outside},
        )


def visible_scopes(scopes: Iterable[str], grant: Grant) -> list[str]:
    """The scopes of a record that the caller may see named (no foreign names leak)."""
    if grant.all_scopes:
        return sorted(scopes)
    return sorted(s for s in scopes if s in grant.scopes)
