"""The one read predicate: which judgments a caller may see for a query.

Scope, status, kind and validity time are applied *before* any ranking, in two
equivalent forms: SQL (for the lexical arms and the final row fetch) and numpy
(for the vector cache). Every recall query passes through ``Predicate.sql`` —
there is no other way to write the scope filter — so none can forget it.

A judgment is visible when at least one of its scope bindings is among the
caller's readable scopes. An empty set of scopes, statuses or kinds selects
nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

KINDS: tuple[str, ...] = (
    "decision",
    "fact",
    "preference",
    "constraint",
    "lesson",
    "workflow",
    "task",
    "schedule",
)
STATUSES: tuple[str, ...] = (
    "proposed",
    "active",
    "superseded",
    "stale",
    "contradicted",
    "rejected",
    "purged",
)
GUIDANCE_KINDS: tuple[str, ...] = ("constraint", "preference", "workflow", "lesson")

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_utc(value: datetime | str) -> datetime:
    """An aware UTC datetime from an ISO 8601 string or a datetime (naive means UTC)."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value.strip())
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def to_epoch_us(value: datetime | str) -> int:
    """Microseconds since the Unix epoch, the cache's unit of validity time."""
    delta = to_utc(value) - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def iso_utc(value: datetime | str) -> str:
    """The store's fixed-width time text, ``YYYY-MM-DDTHH:MM:SS.ffffffZ``.

    The writer stores every time in this form, so text order is time order and
    SQL compares times as strings (cheap, and exact to the microsecond like the
    cache's integers).
    """
    m = to_utc(value)
    return (
        f"{m.year:04d}-{m.month:02d}-{m.day:02d}T"
        f"{m.hour:02d}:{m.minute:02d}:{m.second:02d}.{m.microsecond:06d}Z"
    )


def _checked(names: Iterable[str], known: tuple[str, ...], what: str) -> frozenset[str]:
    if isinstance(names, str):
        raise TypeError(f"{what} must be a collection of names, not a single string")
    out = frozenset(names)
    unknown = sorted(out - set(known))
    if unknown:
        raise ValueError(f"unknown {what}: {', '.join(unknown)}; known: {', '.join(known)}")
    return out


def _placeholders(n: int) -> str:
    return ", ".join("?" * n)


@dataclass(frozen=True)
class Predicate:
    """Who may see what: readable scopes, statuses, kinds (None = all) and a validity time."""

    scopes: frozenset[str]
    statuses: frozenset[str] = frozenset({"active"})
    kinds: frozenset[str] | None = None
    valid_at: datetime | None = None

    @classmethod
    def build(
        cls,
        scopes: Collection[str],
        statuses: Collection[str] = ("active",),
        kinds: Collection[str] | None = None,
        valid_at: datetime | str | None = None,
    ) -> Predicate:
        """Validate the names and normalise the time; ``scopes`` may not be None."""
        if scopes is None:  # pyright: ignore[reportUnnecessaryComparison]
            raise TypeError("scopes must be an explicit collection of readable scope names")
        if isinstance(scopes, str):
            raise TypeError("scopes must be a collection of names, not a single string")
        return cls(
            scopes=frozenset(scopes),
            statuses=_checked(statuses, STATUSES, "statuses"),
            kinds=None if kinds is None else _checked(kinds, KINDS, "kinds"),
            valid_at=None if valid_at is None else to_utc(valid_at),
        )

    @property
    def selects_nothing(self) -> bool:
        """True when no row can pass: no scope, no status or no kind."""
        return not self.scopes or not self.statuses or (self.kinds is not None and not self.kinds)

    def sql(self, alias: str = "j", *, by_id: bool = False) -> tuple[str, list[object]]:
        """The predicate as a SQL boolean over ``judgments AS alias``, with its parameters.

        ``by_id``: the query already names the rows by id; the status and kind
        tests are then written so SQLite cannot pick the (status, kind) index
        over the id lookups (it did, scanning every active row: 5 ms at 100k
        rows instead of 0.1 ms).
        """
        if self.selects_nothing:
            return "0", []
        scopes = sorted(self.scopes)
        statuses = sorted(self.statuses)
        col = f"+{alias}" if by_id else alias
        clauses = [
            f"{col}.status IN ({_placeholders(len(statuses))})",
            scope_filter_sql(alias, len(scopes)),
        ]
        params: list[object] = [*statuses, *scopes]
        if self.kinds is not None:
            kinds = sorted(self.kinds)
            clauses.append(f"{col}.kind IN ({_placeholders(len(kinds))})")
            params.extend(kinds)
        if self.valid_at is not None:
            when = iso_utc(self.valid_at)
            clauses.append(
                f"{alias}.valid_from <= ? AND "
                f"({alias}.valid_until IS NULL OR {alias}.valid_until > ?)"
            )
            params.extend([when, when])
        return " AND ".join(clauses), params


def all_scope_names(conn: Any) -> list[str]:
    """Every scope name in the store: what the host passes as the owner's readable scopes."""
    return sorted(str(r[0]) for r in conn.execute("SELECT name FROM scopes").fetchall())


def scope_filter_sql(alias: str, n_scopes: int) -> str:
    """SQL true when ``alias`` has a binding to one of ``n_scopes`` named scopes (``?`` each).

    A correlated EXISTS probes ``scope_bindings`` by its primary key per row, which
    stays cheap however many rows the caller may read (an ``IN (subquery)`` would
    materialise every binding of every readable scope first).
    """
    if n_scopes <= 0:
        return "0"
    return (
        "EXISTS (SELECT 1 FROM scope_bindings AS sb JOIN scopes AS sc ON sc.id = sb.scope_id "
        f"WHERE sb.judgment_id = {alias}.id AND sc.name IN ({_placeholders(n_scopes)}))"
    )
