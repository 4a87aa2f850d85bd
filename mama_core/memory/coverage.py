"""Which rows the event chain covers, and how: the one list ``verify`` and the writer share.

Every table of the store is named here once, with how it is protected:

- ``CHAINED``: rows the one writer writes. Each event records, under ``rows``,
  the keyed digest of every row it created or changed (found by the table's
  ``event_id`` columns, plus the judgments it touched and the rows it named with
  ``Tx.wrote``). ``verify`` recomputes each row's digest and compares it with the
  latest one the chain recorded, so a changed, deleted or injected row is found.
- ``SEALED``: rows other processes write (the Telegram owner, the mailbox and its
  observations, vectors from a re-embedding). Triggers seal them with a keyed
  hash (``mama_seal``); ``verify`` recomputes it. Observations are also counted in
  the sealed ``store_tally`` (and in the anchor kept outside the file), so a
  deleted one is found too.
- ``DERIVED``: indexes rebuilt from other rows (FTS), checked by their own means.
- ``OPERATIONAL``: runtime bookkeeping (queues, cursors, code hashes) that carries
  no memory; schema and integrity checks only.

A table added later is one line here; a test fails while a table is unlisted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mama_core.scopes.bindings import BINDINGS_DIGEST_SQL
from mama_core.store.connection import Connection
from mama_core.store.secret import StoreSecret


@dataclass(frozen=True)
class ChainedTable:
    """A table whose rows the chain records by key and keyed digest."""

    name: str
    key: str
    """SQL expression of a row's key (text), over the alias ``t``."""
    values: str
    """SQL list of the values the digest covers, over the alias ``t``."""
    lookup: str
    """SQL condition over ``t`` that finds rows by keys given as a JSON list (``?``),
    using an index."""
    event_columns: tuple[str, ...] = ()
    """Columns naming the event that wrote the row: those rows are recorded by it."""
    group_by: str = ""

    def select(self, where: str = "1") -> str:
        group = f" GROUP BY {self.group_by}" if self.group_by else ""
        return f"SELECT {self.key}, {self.values} FROM {self.name} t WHERE {where}{group}"


_BY_ID = "t.{col} IN (SELECT CAST(value AS INTEGER) FROM json_each(?))"

_SCOPE_NAMES = (
    "(SELECT json_group_array(name) FROM (SELECT s.name FROM {link} x JOIN scopes s "
    "ON s.id = x.scope_id WHERE x.{col} = t.{id} ORDER BY s.name))"
)

CHAINED: tuple[ChainedTable, ...] = (
    ChainedTable(
        "judgments",
        "CAST(t.id AS TEXT)",
        "t.id, t.kind, t.topic, t.summary, t.details, t.applies_when, t.steps, t.confidence, "
        "t.status, t.superseded_by, t.outcome, t.valid_from, t.valid_until, t.recorded_at, "
        "t.provenance, t.involvement, t.command_id, t.content_hash",
        _BY_ID.format(col="id"),
    ),
    ChainedTable(
        "scope_bindings",
        "CAST(t.judgment_id AS TEXT)",
        BINDINGS_DIGEST_SQL,
        _BY_ID.format(col="judgment_id"),
        group_by="t.judgment_id",
    ),
    ChainedTable(
        "edges",
        "CAST(t.id AS TEXT)",
        "t.id, t.src_id, t.dst_id, t.kind, t.reason, t.created_at, t.event_id",
        _BY_ID.format(col="id"),
        ("event_id",),
    ),
    ChainedTable(
        "tombstones",
        "CAST(t.id AS TEXT)",
        "t.id, t.judgment_id, t.fingerprint, hex(t.vector), t.model_id, t.reason, t.created_at, "
        "t.event_id, t.lifted_at, t.lift_event_id, "
        + _SCOPE_NAMES.format(link="tombstone_scopes", col="tombstone_id", id="id"),
        _BY_ID.format(col="id"),
        ("event_id", "lift_event_id"),
    ),
    ChainedTable(
        "checkpoints",
        "CAST(t.id AS TEXT)",
        "t.id, (SELECT name FROM scopes WHERE id = t.scope_id), t.summary, t.state, "
        "t.created_at, t.provenance, t.event_id",
        _BY_ID.format(col="id"),
        ("event_id",),
    ),
    ChainedTable(
        "receipts",
        "t.command_id",
        "t.command_id, t.principal, t.action, t.payload_hash, t.receipt, t.event_id, t.created_at",
        "t.command_id IN (SELECT value FROM json_each(?))",
        ("event_id",),
    ),
    ChainedTable(
        "change_proposals",
        "CAST(t.id AS TEXT)",
        # A settings change names its setting where a record's change names the record:
        # the digest of a record's change is the one recorded before settings could be.
        "t.id, t.action, coalesce(t.judgment_id, 'setting:' || t.setting_key), t.payload, "
        "t.proposed_by, t.state, t.created_at, t.event_id, t.resolved_at, t.resolved_event_id",
        _BY_ID.format(col="id"),
        ("event_id", "resolved_event_id"),
    ),
    ChainedTable(
        "commitment_terms",
        "CAST(t.judgment_id AS TEXT)",
        "t.judgment_id, t.owed_by, t.owed_to, t.due_at, t.due_tz, t.state, t.event_id, "
        "t.erased_at, (SELECT json_group_array(observation_id) FROM (SELECT observation_id "
        "FROM commitment_sources x WHERE x.judgment_id = t.judgment_id "
        "ORDER BY observation_id))",
        _BY_ID.format(col="judgment_id"),
        ("event_id",),
    ),
    ChainedTable(
        "owner_settings",
        "CAST(t.id AS TEXT)",
        "t.id, t.key, t.value, t.event_id, t.at",
        _BY_ID.format(col="id"),
        ("event_id",),
    ),
    ChainedTable(
        "event_texts",
        "t.event_id || ':' || t.field",
        "t.event_id, t.field, t.text, t.erased_at",
        "(t.event_id, t.field) IN (SELECT CAST(substr(value, 1, instr(value, ':') - 1) AS "
        "INTEGER), substr(value, instr(value, ':') + 1) FROM json_each(?))",
        ("event_id",),
    ),
)


@dataclass(frozen=True)
class SealedTable:
    """A table whose rows carry ``seal = mama_seal(name, values...)``."""

    name: str
    key: str
    values: str


SEALED: tuple[SealedTable, ...] = (
    SealedTable(
        "observations",
        "CAST(id AS TEXT)",
        "id, source, external_id, author, text, received_at, purged_at",
    ),
    SealedTable(
        "observation_facets",
        "CAST(observation_id AS TEXT)",
        "observation_id, channel, scope, metadata",
    ),
    SealedTable("telegram_owner", "CAST(id AS TEXT)", "id, chat_id, user_id, username, paired_at"),
    SealedTable(
        "embeddings", "judgment_id || '/' || model_id", "judgment_id, model_id, dim, vector"
    ),
    SealedTable(
        "mailbox",
        "CAST(id AS TEXT)",
        "id, kind, source_ref, observation_id, priority, meta, created_at",
    ),
    SealedTable("store_tally", "CAST(id AS TEXT)", "id, observations, last_observation, anchored"),
)

COVERED_BY_ROWS = frozenset({"tombstone_scopes", "scopes", "commitment_sources"})
"""Tables whose rows enter the digests of others (scope names, tombstone scopes, a
commitment's source observations)."""

DERIVED = frozenset({"judgments_fts", "judgments_trigram", "said_keys"})
"""Indexes rebuilt from ``judgments``; FTS5's integrity-check compares the full-text
ones. ``said_keys`` (a keyed hash of each record's normalised words, kept by the writer)
only points a save at records to compare: the save compares their texts itself."""

CHAIN_ITSELF = frozenset({"events", "meta"})
"""The chain, and the store id its secret is derived from."""

OPERATIONAL = frozenset(
    {
        "deliveries",
        "pairing_codes",
        "runtime_state",
        "connector_cursors",
        "connector_health",
        "schedules",
        "briefs",
    }
)
"""Bookkeeping with no memory in it: checked by the schema and integrity checks only."""


def listed_tables() -> frozenset[str]:
    """Every table this module accounts for."""
    return (
        frozenset(t.name for t in CHAINED)
        | frozenset(t.name for t in SEALED)
        | COVERED_BY_ROWS
        | DERIVED
        | CHAIN_ITSELF
        | OPERATIONAL
    )


def row_digests(
    conn: Connection,
    secret: StoreSecret,
    table: ChainedTable,
    where: str = "1",
    params: tuple[Any, ...] = (),
) -> Iterator[tuple[str, str]]:
    """``(key, keyed digest)`` of the rows of ``table`` matching ``where``."""
    for row in conn.execute(table.select(where), params):
        yield str(row[0]), secret.seal(table.name, *row[1:])


_EVENT_COLUMNS = tuple((t.name, col) for t in CHAINED for col in t.event_columns)
_NAMING_SQL = " UNION ALL ".join(
    f"SELECT {i} WHERE EXISTS (SELECT 1 FROM {name} WHERE {col} = ?1)"
    for i, (name, col) in enumerate(_EVENT_COLUMNS)
)


def _tables_naming(conn: Connection, event_id: int) -> set[tuple[str, str]]:
    """The ``(table, column)`` pairs with a row naming ``event_id``: one statement of
    indexed probes, so a save that wrote two such rows does not run ten lookups."""
    return {_EVENT_COLUMNS[int(i)] for (i,) in conn.execute(_NAMING_SQL, (event_id,))}


def written_rows(
    conn: Connection,
    secret: StoreSecret,
    event_id: int,
    named: dict[str, set[str]],
) -> dict[str, dict[str, str]]:
    """The digests an event records: rows naming it in their event columns, plus ``named``."""
    naming = _tables_naming(conn, event_id)
    out: dict[str, dict[str, str]] = {}
    for table in CHAINED:
        digests: dict[str, str] = {}
        for col in table.event_columns:
            if (table.name, col) in naming:
                digests.update(row_digests(conn, secret, table, f"t.{col} = ?", (event_id,)))
        keys = sorted(named.get(table.name, ()))
        if keys:
            digests.update(row_digests(conn, secret, table, table.lookup, (json.dumps(keys),)))
        for key in keys:
            digests.setdefault(key, "")  # named but gone: recorded as absent
        if digests:
            out[table.name] = digests
    return out
