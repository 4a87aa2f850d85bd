"""Scopes are bindings: the one module that names the ``scope_bindings`` table in SQL.

The confidentiality boundary is here: ``scope_predicate`` is the only SQL that
decides which judgments a set of readable scopes may see, and both the engine's
reads (``mama_core.scopes.reach.scope_filter``, by grant) and recall's read predicate
(``recall.predicate.Predicate.sql``) are built on it, so no query can write its
own. The rest is the bindings themselves: written with a judgment, and read
back by name for results, the vector cache, the chain's row digests and the
review window. A test asserts that no other module of ``mama_core``, ``app`` or
``ui`` names the table in SQL.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from mama_core.store.connection import Connection

BINDINGS_DIGEST_SQL = (
    "(SELECT json_group_array(name) FROM (SELECT s.name FROM scope_bindings x JOIN scopes s "
    "ON s.id = x.scope_id WHERE x.judgment_id = t.judgment_id ORDER BY s.name))"
)
"""The values the event chain digests for a judgment's bindings (over ``scope_bindings t``)."""


def _placeholders(n: int) -> str:
    return ", ".join("?" * n)


def scope_predicate(alias: str, scopes: Iterable[str]) -> tuple[str, list[object]]:
    """SQL true when judgment ``alias`` is bound to at least one of ``scopes``, with its
    parameters; no scopes select nothing (the predicate is false, not absent).

    A correlated EXISTS probes ``scope_bindings`` by its primary key per row, which
    stays cheap however many rows the caller may read (an ``IN (subquery)`` would
    materialise every binding of every readable scope first).
    """
    names = sorted(set(scopes))
    if not names:
        return "0", []
    sql = (
        "EXISTS (SELECT 1 FROM scope_bindings AS sb JOIN scopes AS sc ON sc.id = sb.scope_id "
        f"WHERE sb.judgment_id = {alias}.id AND sc.name IN ({_placeholders(len(names))}))"
    )
    return sql, list(names)


def same_scopes_predicate(alias: str, scopes: Iterable[str]) -> tuple[str, list[object]]:
    """SQL true when judgment ``alias`` is bound to exactly ``scopes`` (no more, no
    fewer), with its parameters; no scopes select nothing. Both checks probe the row's
    own bindings by primary key: as many bindings as names, none outside the names.
    Nothing is materialised, so its cost is per row read; pair it with
    ``first_scope_rows`` (or another short list of ids) to choose which rows are read."""
    names = sorted(set(scopes))
    if not names:
        return "0", []
    marks = _placeholders(len(names))
    sql = (
        f"(SELECT count(*) FROM scope_bindings AS sb WHERE sb.judgment_id = {alias}.id) = ? "
        "AND NOT EXISTS (SELECT 1 FROM scope_bindings AS sb JOIN scopes AS sc "
        f"ON sc.id = sb.scope_id WHERE sb.judgment_id = {alias}.id AND sc.name NOT IN ({marks}))"
    )
    return sql, [len(names), *names]


def first_scope_rows(alias: str, scopes: Iterable[str]) -> tuple[str, list[object]]:
    """A FROM clause naming judgments ``alias``: those bound to the first of ``scopes``,
    read in id order through that scope's index of bindings, row by row, so a
    ``LIMIT`` stops the read early (an ``IN (subquery)`` first listed every binding of
    the scope, half the store for ``global``, on every save). No scopes read nothing."""
    names = sorted(set(scopes))
    first = names[0] if names else None
    sql = (
        f"scope_bindings AS sb0 CROSS JOIN judgments AS {alias} ON {alias}.id = sb0.judgment_id "
        "AND sb0.scope_id = (SELECT sc0.id FROM scopes AS sc0 WHERE sc0.name = ?)"
    )
    return sql, [first]


def bound_up_to(conn: Connection, scope: str, limit: int) -> int:
    """How many judgments are bound to ``scope`` (ever, whatever their status), counted
    no further than ``limit``: a read of the scope's index of bindings that stops there."""
    row = conn.execute(
        "SELECT count(*) FROM (SELECT 1 FROM scope_bindings AS sb JOIN scopes AS sc "
        "ON sc.id = sb.scope_id WHERE sc.name = ? LIMIT ?)",
        (scope, limit),
    ).fetchone()
    return int(row[0])


def scope_names_column(alias: str) -> str:
    """A SQL column: the scope names judgment ``alias`` is bound to, joined by ``char(31)``."""
    return (
        "(SELECT group_concat(sc.name, char(31)) FROM scope_bindings AS sb "
        f" JOIN scopes AS sc ON sc.id = sb.scope_id WHERE sb.judgment_id = {alias}.id)"
    )


def ensure_scope_ids(conn: Connection, names: Iterable[str]) -> list[int]:
    """Ids of the named scopes, creating rows for new names (inside the write)."""
    ids: list[int] = []
    for name in names:
        conn.execute("INSERT OR IGNORE INTO scopes (name) VALUES (?)", (name,))
        ids.append(int(conn.execute("SELECT id FROM scopes WHERE name = ?", (name,)).fetchone()[0]))
    return ids


def bind_scopes(conn: Connection, judgment_id: int, names: Iterable[str]) -> None:
    """Bind a judgment to its scopes (inside the writer's transaction)."""
    for scope_id in ensure_scope_ids(conn, names):
        conn.execute(
            "INSERT OR IGNORE INTO scope_bindings (judgment_id, scope_id) VALUES (?, ?)",
            (judgment_id, scope_id),
        )


def scopes_of(conn: Connection, judgment_id: int) -> list[str]:
    """All scope names a judgment is bound to, sorted."""
    rows = conn.execute(
        "SELECT s.name FROM scope_bindings sb JOIN scopes s ON s.id = sb.scope_id "
        "WHERE sb.judgment_id = ? ORDER BY s.name",
        (judgment_id,),
    ).fetchall()
    return [str(r[0]) for r in rows]


def scopes_by_id(conn: Connection, ids: Iterable[int]) -> dict[int, list[str]]:
    """Scope names of several judgments at once, each list sorted."""
    out: dict[int, list[str]] = {}
    rows = conn.execute(
        "SELECT sb.judgment_id, s.name FROM scope_bindings sb JOIN scopes s ON s.id = sb.scope_id "
        "WHERE sb.judgment_id IN (SELECT value FROM json_each(?)) ORDER BY s.name",
        (json.dumps(list(ids)),),
    ).fetchall()
    for judgment_id, name in rows:
        out.setdefault(int(judgment_id), []).append(str(name))
    return out


def scope_sets(conn: Connection, ids: Sequence[int] | None) -> dict[int, frozenset[str]]:
    """Scope names per judgment, for ``ids`` or (None) for every bound judgment."""
    where, params = "", list[object]()
    if ids is not None:
        where = f"WHERE sb.judgment_id IN ({_placeholders(len(ids))})"
        params = list(ids)
    found: dict[int, set[str]] = {}
    for jid, name in conn.execute(
        "SELECT sb.judgment_id, sc.name FROM scope_bindings AS sb "
        f"JOIN scopes AS sc ON sc.id = sb.scope_id {where}",
        params,
    ).fetchall():
        found.setdefault(int(jid), set()).add(str(name))
    return {jid: frozenset(names) for jid, names in found.items()}


def bound_scope_names(conn: Connection) -> list[str]:
    """Every scope a judgment has been bound to, sorted."""
    rows = conn.execute(
        "SELECT DISTINCT s.name FROM scopes s JOIN scope_bindings sb ON sb.scope_id = s.id "
        "ORDER BY s.name"
    ).fetchall()
    return [str(r[0]) for r in rows]


def all_scope_names(conn: Connection) -> list[str]:
    """Every scope name in the store: what the host passes as the owner's readable scopes."""
    return sorted(str(r[0]) for r in conn.execute("SELECT name FROM scopes").fetchall())
