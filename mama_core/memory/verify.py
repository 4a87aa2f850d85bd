"""``mama verify``: check that the store's history and indexes are what they claim.

It walks the event chain from the first event (each ``prev_hash`` must be the
previous event's hash, each hash must match its fields, ids must be gapless),
checks every judgment's ``content_hash`` against its row and its creating event
(purged rows excepted, when their purge event is there), rebuilds each status
from the events and compares, runs FTS5's ``integrity-check`` on both indexes
and SQLite's ``PRAGMA integrity_check``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mama_core.memory.events import EVENT_COLUMNS, GENESIS_HASH, event_from_row
from mama_core.memory.records import JUDGMENT_COLUMNS, Judgment, content_hash
from mama_core.memory.timeline import fold_events
from mama_core.store import sqlcipher
from mama_core.store.connection import Connection

MAX_PROBLEMS = 1000


@dataclass
class VerifyReport:
    """What ``verify_store`` found: ``ok`` when there are no problems."""

    problems: list[str] = field(default_factory=list)
    events: int = 0
    judgments: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_store(conn: Connection) -> VerifyReport:
    """Check the event chain, judgment hashes and statuses, FTS indexes and the file."""
    report = VerifyReport()
    created = _check_chain(conn, report)
    _check_judgments(conn, report, created)
    for index in ("judgments_fts", "judgments_trigram"):
        try:
            conn.execute(f"INSERT INTO {index} ({index}, rank) VALUES ('integrity-check', 1)")
        except sqlcipher.Error as exc:
            report.problems.append(f"full-text index {index} disagrees with the judgments: {exc}")
    rows = conn.execute("PRAGMA integrity_check").fetchall()
    if [r[0] for r in rows] != ["ok"]:
        report.problems += [f"integrity_check: {r[0]}" for r in rows[:20]]
    del report.problems[MAX_PROBLEMS:]
    return report


def _check_chain(conn: Connection, report: VerifyReport) -> dict[int, str]:
    """Walk the events; return each judgment's content hash as its creating event says."""
    created: dict[int, str] = {}
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
        for change in event.payload.get("transitions", ()):
            if change.get("from") is None and event.judgment_id == change.get("id"):
                created[int(change["id"])] = str(event.payload.get("content_hash", ""))
        expected_prev, expected_id = stored_hash, event.id + 1
    return created


def _check_judgments(conn: Connection, report: VerifyReport, created: dict[int, str]) -> None:
    states = fold_events(conn)
    rows = conn.execute(f"SELECT {JUDGMENT_COLUMNS} FROM judgments ORDER BY id").fetchall()
    for row in rows:
        report.judgments += 1
        try:
            j = Judgment.from_row(row)
        except (ValueError, TypeError) as exc:
            report.problems.append(f"judgment {row[0]} cannot be read: {exc}")
            continue
        state = states.get(j.id)
        if state is None or j.id not in created:
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
            if _has_vectors(conn, j.id):
                report.problems.append(f"judgment {j.id} was purged but still has vectors")
            continue
        if content_hash(j.content()) != j.content_hash or j.content_hash != created[j.id]:
            report.problems.append(f"judgment {j.id} was altered (its content hash does not match)")


def _has_vectors(conn: Connection, judgment_id: int) -> bool:
    row = conn.execute(
        "SELECT 1 FROM embeddings WHERE judgment_id = ? LIMIT 1", (judgment_id,)
    ).fetchone()
    return row is not None


__all__ = ["VerifyReport", "verify_store"]
