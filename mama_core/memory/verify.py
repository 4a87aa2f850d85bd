"""``mama verify``: check that the store's history, rows and indexes are what they claim.

- the schema is the one the migrations make (the core's and those of each ``series``
  a layer above keeps in the same file): no dropped trigger, no extra object;
- the event chain links from the first event (each ``prev_hash`` is the previous
  hash, each hash matches its fields, ids are gapless), and the head anchored
  outside the file (if given) is still in it, so a cut tail or a consistent
  rewrite is found;
- every row the chain covers (``coverage.CHAINED``) has the digest the latest
  event that wrote it recorded: a changed, deleted or injected row is found;
- every sealed row (``coverage.SEALED``) carries its keyed seal, and the observations
  are as many as the sealed tally counted (a deleted one is found); a store that has
  had an anchor and is given none fails;
- every judgment matches its creating event's content hash, its status is what
  the events fold to, and a purged one has no vectors while a live one has;
- FTS5's ``integrity-check``, ``PRAGMA integrity_check`` and ``foreign_key_check``.

A damaged file is a finding, never a crash: each check that cannot read the
file says so and the others still run. The checks read one snapshot (a writer in
another process goes on meanwhile); a store another process keeps busy beyond the
busy timeout is not a finding but ``VerifyBusyError``: it could not be checked.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from mama_core.canonical import canonical_hash
from mama_core.errors import StoreLockedError
from mama_core.json_types import JsonObject
from mama_core.memory.anchor import ChainAnchor, anchor_problems, missing_anchor_problems
from mama_core.memory.coverage import CHAINED, SEALED, ChainedTable, row_digests
from mama_core.memory.events import (
    EVENT_COLUMNS,
    EVENT_FORMAT,
    GENESIS_HASH,
    event_from_row,
    fold_events,
)
from mama_core.model import JUDGMENT_COLUMNS, Judgment
from mama_core.store import sqlcipher
from mama_core.store.connection import Connection
from mama_core.store.expected_schema import schema_problems
from mama_core.store.migrations import MigrationSeries
from mama_core.store.secret import StoreSecret

MAX_PROBLEMS = 1000
BUSY_TRIES = 3


class VerifyBusyError(StoreLockedError):
    """Another process kept the store busy: verify could not check it (not a finding)."""

    code = "verify_busy"
    exit_code = 19


@dataclass
class VerifyReport:
    """What ``verify_store`` found: ``ok`` when there are no problems."""

    problems: list[str] = field(default_factory=list[str])
    events: int = 0
    judgments: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class _Chain:
    """What the walk of the events learned."""

    created: dict[int, tuple[str, bool]] = field(default_factory=dict[int, tuple[str, bool]])
    """judgment id -> (content hash its creating event recorded, keyed?)"""
    recorded: dict[str, dict[str, str]] = field(default_factory=dict[str, dict[str, str]])
    """table -> key -> the latest digest an event recorded"""
    legacy_events: set[int] = field(default_factory=set[int])
    """events written before row digests (their rows are checked the old way)"""


def verify_store(
    conn: Connection,
    secret: StoreSecret,
    anchor: ChainAnchor | Sequence[ChainAnchor] | None = None,
    series: Sequence[MigrationSeries] = (),
) -> VerifyReport:
    """Check the schema, the chain (and its anchors), the covered and sealed rows, the
    judgments, the FTS indexes and the file.

    ``anchor`` is every copy of the anchor kept outside the file that was found (each
    is checked); none for a store that has had one is a problem. ``series`` are the
    migration series of the layers above the core whose tables the store may hold (the
    app's: ``app.durable.schema.expected_series()``); their objects are expected too,
    at the versions the store records. Raises ``VerifyBusyError`` when another process
    keeps the store busy past the busy timeout, ``BUSY_TRIES`` times."""
    anchors = [anchor] if isinstance(anchor, ChainAnchor) else list(anchor or ())
    for attempt in range(1, BUSY_TRIES + 1):
        try:
            return _verify(conn, secret, anchors, series)
        except _Busy as busy:
            if attempt == BUSY_TRIES:
                raise VerifyBusyError(
                    "The memory store could not be checked: another MAMA process kept it "
                    f"busy ({busy.args[0]}); nothing was found wrong, try again later."
                ) from busy.__cause__
    raise AssertionError("unreachable")


class _Busy(Exception):
    """A check met another process's lock (SQLITE_BUSY / LOCKED): not a finding."""


def _is_busy(exc: sqlcipher.Error) -> bool:
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    text = str(exc).lower()
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text or "busy" in text


def _verify(
    conn: Connection,
    secret: StoreSecret,
    anchors: list[ChainAnchor],
    series: Sequence[MigrationSeries],
) -> VerifyReport:
    report = VerifyReport()
    chain = _Chain()

    def step(what: str, check: Callable[[], None]) -> None:
        try:
            check()
        except sqlcipher.Error as exc:
            if _is_busy(exc):
                raise _Busy(f"{what}: {exc}") from exc
            report.problems.append(f"the database file is damaged ({what} cannot be read: {exc})")
        except (ValueError, TypeError, KeyError) as exc:  # bytes that decrypt but do not parse
            report.problems.append(f"{what} cannot be read: {exc!r}")

    # One read snapshot for the checks that compare tables with each other, so a
    # commit made meanwhile by another process is seen by all of them or by none.
    step("the store", lambda: _begin_snapshot(conn))
    try:
        step("the schema", lambda: report.problems.extend(schema_problems(conn, series)))
        step("the events", lambda: _check_chain(conn, report, chain))
        for kept in anchors:
            step(
                "the chain anchor",
                lambda a=kept: _add_new(report, anchor_problems(conn, secret, a)),
            )
        step(
            "the chain anchor",
            lambda: report.problems.extend(missing_anchor_problems(conn, len(anchors))),
        )
        step("the judgments", lambda: _check_judgments(conn, secret, report, chain))
        for table in CHAINED:
            step(table.name, lambda t=table: _check_chained(conn, secret, report, chain, t))
        for sealed in SEALED:
            step(
                sealed.name,
                lambda s=sealed: _check_sealed(conn, secret, report, s.name, s.key, s.values),
            )
        step("the observations", lambda: _check_tally(conn, report))
        step("the vectors", lambda: _check_vectors(conn, report))
        step("the file", lambda: _check_file(conn, report))
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    # FTS5's integrity-check is written as an INSERT: it needs the write lock, so it
    # runs after the snapshot, waiting for a writer as long as the busy timeout says.
    for index in ("judgments_fts", "judgments_trigram"):
        step(index, lambda i=index: _check_fts(conn, report, i))
    del report.problems[MAX_PROBLEMS:]
    return report


def _begin_snapshot(conn: Connection) -> None:
    if conn.in_transaction:
        conn.execute("ROLLBACK")
    conn.execute("BEGIN")
    conn.execute("SELECT count(*) FROM meta").fetchone()  # the snapshot starts here


def _add_new(report: VerifyReport, problems: list[str]) -> None:
    """Add ``problems`` not already reported (two copies of one anchor say the same)."""
    report.problems.extend(p for p in problems if p not in report.problems)


def _check_tally(conn: Connection, report: VerifyReport) -> None:
    """The observations are as many as the sealed tally counted, up to its last id."""
    rows = conn.execute(
        "SELECT observations, last_observation FROM store_tally WHERE id = 1"
    ).fetchall()
    if not rows:
        report.problems.append("the observation tally is gone (its row was deleted)")
        return
    counted, last = int(rows[0][0]), int(rows[0][1])
    present, highest = conn.execute(
        "SELECT count(*), coalesce(max(id), 0) FROM observations"
    ).fetchone()
    if present < counted:
        report.problems.append(
            f"{counted - present} observation(s) were deleted: the store counted {counted} "
            f"written, {present} are there"
        )
    elif present > counted:
        report.problems.append(f"{present - counted} observation(s) were inserted behind the tally")
    if int(highest) != last:
        report.problems.append(
            f"the last observation is {highest}, but the store counted up to {last} "
            "(observations were deleted or inserted behind the tally)"
        )


def _check_chain(conn: Connection, report: VerifyReport, chain: _Chain) -> None:
    """Walk the events: links, hashes, gapless ids; collect what they created and recorded."""
    expected_prev, expected_id = GENESIS_HASH, 1
    for row in conn.execute(f"SELECT {EVENT_COLUMNS} FROM events ORDER BY id").fetchall():
        report.events += 1
        try:
            event, stored_hash = event_from_row(row)
        except (ValueError, TypeError) as exc:
            report.problems.append(f"event {row[0]} cannot be read: {exc}")
            expected_prev, expected_id = str(row[8]), int(row[0]) + 1
            continue
        if event.id != expected_id:
            report.problems.append(f"events {expected_id}..{event.id - 1} are missing")
        if event.prev_hash != expected_prev:
            report.problems.append(f"event {event.id} does not link to the event before it")
        if event.compute_hash() != stored_hash:
            report.problems.append(f"event {event.id} was altered (its hash does not match)")
        keyed = event.payload.get("format") == EVENT_FORMAT
        if not keyed:
            chain.legacy_events.add(event.id)
        also_created: JsonObject = event.payload.get("created") or {}
        for change in event.payload.get("transitions", ()):
            if change.get("from") is not None:
                continue
            if event.judgment_id == change.get("id"):
                digest = str(event.payload.get("content_hash", ""))
                chain.created[int(change["id"])] = (digest, keyed)
            elif str(change.get("id")) in also_created:  # more than one record (a restore)
                digest = str(also_created[str(change["id"])])
                chain.created[int(change["id"])] = (digest, keyed)
        rows: dict[Any, Any] = event.payload.get("rows") or {}
        for table, digests in rows.items():
            chain.recorded.setdefault(str(table), {}).update(
                {str(k): str(v) for k, v in cast(dict[Any, Any], digests).items()}
            )
        expected_prev, expected_id = stored_hash, event.id + 1


def _check_judgments(
    conn: Connection, secret: StoreSecret, report: VerifyReport, chain: _Chain
) -> None:
    states = fold_events(conn)
    present: set[int] = set()
    for row in conn.execute(f"SELECT {JUDGMENT_COLUMNS} FROM judgments ORDER BY id").fetchall():
        report.judgments += 1
        present.add(int(row[0]))
        try:
            j = Judgment.from_row(row)
        except (ValueError, TypeError) as exc:
            report.problems.append(f"judgment {row[0]} cannot be read: {exc}")
            continue
        state = states.get(j.id)
        if state is None or j.id not in chain.created:
            report.problems.append(f"judgment {j.id} has no event that created it")
            continue
        if state.status != j.status:
            report.problems.append(
                f"judgment {j.id} is {j.status} but its events say {state.status}"
            )
        if state.valid_until != j.valid_until:
            report.problems.append(f"judgment {j.id}'s valid_until disagrees with its events")
        if state.involvement is not None and state.involvement != j.involvement:
            report.problems.append(f"judgment {j.id}'s involvement disagrees with its events")
        if j.status == "purged":
            continue
        recorded, keyed = chain.created[j.id]
        computed = secret.hash(j.content()) if keyed else canonical_hash(j.content())
        if computed != j.content_hash or j.content_hash != recorded:
            report.problems.append(f"judgment {j.id} was altered (its content hash does not match)")
    for missing in sorted(set(chain.created) - present):
        report.problems.append(f"judgment {missing} was deleted (its creating event is there)")


def _check_chained(
    conn: Connection,
    secret: StoreSecret,
    report: VerifyReport,
    chain: _Chain,
    table: ChainedTable,
) -> None:
    """Each row's digest is the latest one recorded; none missing, none unrecorded."""
    recorded = chain.recorded.get(table.name, {})
    actual = dict(row_digests(conn, secret, table))
    legacy = _legacy_keys(conn, chain, table) if chain.legacy_events else set[str]()
    for key, digest in sorted(actual.items()):
        if key in recorded:
            if recorded[key] != digest:
                report.problems.append(f"{table.name} row {key} was altered behind the log")
        elif key not in legacy:
            report.problems.append(f"{table.name} row {key} was not written by any event")
    for key, digest in sorted(recorded.items()):
        if digest and key not in actual:
            report.problems.append(f"{table.name} row {key} was deleted")


def _legacy_keys(conn: Connection, chain: _Chain, table: ChainedTable) -> set[str]:
    """Rows written by events from before row digests: the chain never recorded them."""
    events = json.dumps(sorted(chain.legacy_events))
    if table.event_columns:
        where = " OR ".join(
            f"t.{c} IN (SELECT value FROM json_each(?))" for c in table.event_columns
        )
        params: tuple[str, ...] = (events,) * len(table.event_columns)
    elif table.name in ("judgments", "scope_bindings"):
        id_column = "id" if table.name == "judgments" else "judgment_id"
        where = f"t.{id_column} IN (SELECT value FROM json_each(?))"
        params = (json.dumps(sorted(j for j, (_, keyed) in chain.created.items() if not keyed)),)
    else:
        return set()
    return {str(r[0]) for r in conn.execute(table.select(where), params)}


def _check_sealed(
    conn: Connection, secret: StoreSecret, report: VerifyReport, name: str, key: str, values: str
) -> None:
    for row in conn.execute(f"SELECT {key}, seal, {values} FROM {name}"):
        if row[1] is None or secret.seal(name, *row[2:]) != row[1]:
            report.problems.append(f"{name} row {row[0]} was altered (its seal does not match)")


def _check_vectors(conn: Connection, report: VerifyReport) -> None:
    for (jid,) in conn.execute(
        "SELECT id FROM judgments j WHERE status = 'purged' "
        "AND EXISTS (SELECT 1 FROM embeddings e WHERE e.judgment_id = j.id) ORDER BY id"
    ):
        report.problems.append(f"judgment {jid} was purged but still has vectors")
    for (jid,) in conn.execute(
        "SELECT id FROM judgments j WHERE status != 'purged' "
        "AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.judgment_id = j.id) ORDER BY id"
    ):
        report.problems.append(f"judgment {jid} has no vector (its vectors were deleted)")


def _check_fts(conn: Connection, report: VerifyReport, index: str) -> None:
    try:
        conn.execute(f"INSERT INTO {index} ({index}, rank) VALUES ('integrity-check', 1)")
    except sqlcipher.Error as exc:
        if _is_busy(exc):  # another process writes: not a finding
            raise _Busy(f"{index}: {exc}") from exc
        report.problems.append(f"full-text index {index} disagrees with the judgments: {exc}")


def _check_file(conn: Connection, report: VerifyReport) -> None:
    rows = conn.execute("PRAGMA integrity_check").fetchall()
    if [r[0] for r in rows] != ["ok"]:
        report.problems += [f"integrity_check: {r[0]}" for r in rows[:20]]
    for table, rowid, parent, _ in conn.execute("PRAGMA foreign_key_check").fetchall()[:20]:
        report.problems.append(f"{table} row {rowid} points at a missing {parent} row")


__all__ = ["VerifyBusyError", "VerifyReport", "verify_store"]
