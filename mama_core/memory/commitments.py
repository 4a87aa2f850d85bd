"""Commitments: who owes what to whom by when, as judgments of kind ``commitment``.

The "what" is the judgment's summary; the terms (who owes it, to whom, the due time
and the zone it was given in, open/done/dropped) live in ``commitment_terms`` and the
observations it was found in in ``commitment_sources``, both written in the same
transaction as the judgment. Like judgments they are append-only: closing or
rescheduling appends a new record that supersedes the open one, and a purge of the
record erases its terms (names and due) with its text.

Where a new commitment lands (``landing_status``) follows who speaks: the owner's
word, or an agent answering the owner, makes it active; from a turn the owner did
not start (a source delta, a schedule, MCP) one the owner owes is only proposed,
one owed *to* the owner may land active.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict
from zoneinfo import ZoneInfo

from mama_core import clock
from mama_core.errors import InvalidTransitionError, OwnerTurnRequiredError
from mama_core.memory.inputs import OWNER_PARTY, CommitmentTerms
from mama_core.memory.results import CommitmentEntry, CommitmentTermsView
from mama_core.memory.writer import Tx
from mama_core.model import Judgment, Kind, Status
from mama_core.scopes.bindings import scope_names_column
from mama_core.scopes.grants import Grant
from mama_core.scopes.reach import scope_filter, visible_scopes
from mama_core.session import SessionFacts
from mama_core.store.connection import Connection

OPEN, DONE, DROPPED = "open", "done", "dropped"


@dataclass(frozen=True)
class Terms:
    """One commitment record's terms, as stored."""

    owed_by: str
    owed_to: str
    due_at: str | None
    due_tz: str | None
    state: str
    sources: tuple[int, ...] = ()


def due_fields(due: datetime | None) -> tuple[str | None, str | None]:
    """``(due_at, due_tz)`` of an aware due time: the instant in the store's UTC form,
    and the IANA zone it was given in when it carries one (an offset alone names none)."""
    if due is None:
        return None, None
    zone = due.tzinfo.key if isinstance(due.tzinfo, ZoneInfo) else None
    return clock.iso(due), zone


def terms_of_input(inp: CommitmentTerms | None, sources: Sequence[int] = ()) -> Terms:
    """The terms a save records (none given: the owner owes it, to no one named, no due);
    found in ``sources``, every observation the save cites (its ``source_observations``
    and its ``evidence``)."""
    if inp is None:
        return Terms(OWNER_PARTY, "", None, None, OPEN, tuple(sources))
    due_at, due_tz = due_fields(inp.due)
    return Terms(inp.owed_by, inp.owed_to, due_at, due_tz, OPEN, tuple(sources))


def landing_status(
    session: SessionFacts, terms: Terms, replaces_owner_record: bool, replaces_any: bool
) -> Status:
    """Where a new commitment lands (see the module's docstring). A revision of another
    record from a turn the owner did not start is only proposed: taking the place of an
    open commitment would close or move it, which is the owner's word."""
    if session.acts_as_owner:
        return Status.ACTIVE
    if replaces_owner_record:
        return Status.PROPOSED
    if session.is_owner_turn and not session.tainted:
        return Status.ACTIVE
    if replaces_any:
        return Status.PROPOSED
    owed_to_owner = terms.owed_to == OWNER_PARTY and terms.owed_by != OWNER_PARTY
    return Status.ACTIVE if owed_to_owner else Status.PROPOSED


def require_owner_turn(session: SessionFacts, action: str) -> None:
    """Closing or rescheduling a commitment is the owner's word, or an agent's in a turn
    the owner started: refused ``owner_turn_required`` anywhere else."""
    if not session.is_owner_turn:
        raise OwnerTurnRequiredError(
            f"{action} needs the owner: only the owner, or an agent answering the owner, can "
            f"close or move a commitment; this {session.turn.value} turn cannot.",
            details={"action": action, "turn": session.turn.value},
        )


def write_terms(tx: Tx, judgment_id: int, terms: Terms) -> None:
    """Record ``terms`` of the new commitment ``judgment_id`` (its source observations
    already checked visible to the caller)."""
    tx.conn.execute(
        "INSERT INTO commitment_terms (judgment_id, owed_by, owed_to, due_at, due_tz, state, "
        "event_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            judgment_id,
            terms.owed_by,
            terms.owed_to,
            terms.due_at,
            terms.due_tz,
            terms.state,
            tx.event_id,
        ),
    )
    tx.conn.executemany(
        "INSERT INTO commitment_sources (judgment_id, observation_id) VALUES (?, ?)",
        [(judgment_id, oid) for oid in terms.sources],
    )


def load_terms(conn: Connection, judgment_id: int) -> Terms | None:
    """The terms of commitment record ``judgment_id`` (None: not a commitment's)."""
    row = conn.execute(
        "SELECT owed_by, owed_to, due_at, due_tz, state FROM commitment_terms "
        "WHERE judgment_id = ?",
        (judgment_id,),
    ).fetchone()
    if row is None:
        return None
    sources = conn.execute(
        "SELECT observation_id FROM commitment_sources WHERE judgment_id = ? "
        "ORDER BY observation_id",
        (judgment_id,),
    ).fetchall()
    return Terms(
        str(row[0]),
        str(row[1]),
        row[2],
        row[3],
        str(row[4]),
        tuple(int(r[0]) for r in sources),
    )


def terms_view(conn: Connection, judgment_id: int) -> CommitmentTermsView | None:
    """A commitment record's terms as readers see them (None: not a commitment's)."""
    terms = load_terms(conn, judgment_id)
    if terms is None:
        return None
    return CommitmentTermsView(
        owed_by=terms.owed_by,
        owed_to=terms.owed_to,
        due_at=terms.due_at,
        due_tz=terms.due_tz,
        state=terms.state,
        source_observations=list(terms.sources),
    )


def open_terms(conn: Connection, target: Judgment, doing: str) -> Terms:
    """The terms of ``target`` if it is an active, open commitment; else
    ``invalid_transition`` saying why ``doing`` cannot happen."""
    terms = load_terms(conn, target.id) if target.kind == Kind.COMMITMENT else None
    if terms is None:
        raise InvalidTransitionError(
            f"Judgment {target.id} is a {target.kind}, not a commitment; {doing} needs one.",
            details={"id": target.id, "kind": target.kind},
        )
    if target.status != Status.ACTIVE:
        hint = " (approve or reject it first)" if target.status == Status.PROPOSED else ""
        raise InvalidTransitionError(
            f"Commitment {target.id} is {target.status}; {doing} needs it active{hint}.",
            details={"id": target.id, "status": target.status},
        )
    if terms.state != OPEN:
        raise InvalidTransitionError(
            f"Commitment {target.id} is already {terms.state}; {doing} needs it open.",
            details={"id": target.id, "state": terms.state},
        )
    return terms


class ErasedTerms(TypedDict):
    """What a purge erases of a commitment's terms (hashed into its event)."""

    owed_by: str
    owed_to: str
    due_at: str | None
    due_tz: str | None


def erase_terms(tx: Tx, judgment_id: int) -> ErasedTerms | None:
    """Erase the terms of a purged commitment record (the names and the due); return
    what was erased, for the purge's keyed hash (None: it had none)."""
    terms = load_terms(tx.conn, judgment_id)
    if terms is None:
        return None
    tx.conn.execute(
        "UPDATE commitment_terms SET owed_by = '', owed_to = '', due_at = NULL, due_tz = NULL, "
        "erased_at = ? WHERE judgment_id = ?",
        (tx.at, judgment_id),
    )
    tx.wrote("commitment_terms", judgment_id)
    return {
        "owed_by": terms.owed_by,
        "owed_to": terms.owed_to,
        "due_at": terms.due_at,
        "due_tz": terms.due_tz,
    }


def list_commitments(
    conn: Connection,
    grant: Grant,
    *,
    now: datetime,
    state: str = OPEN,
    include_proposed: bool = True,
    limit: int = 200,
) -> list[CommitmentEntry]:
    """The commitments in ``grant``'s scopes in ``state``, by due time (none last) then
    id; ``overdue`` is an open one whose due is before ``now``. The scope predicate sits
    before the limit, so foreign rows never take a place."""
    statuses = (Status.ACTIVE.value, Status.PROPOSED.value) if include_proposed else ("active",)
    predicate, params = scope_filter("j", grant)
    rows = conn.execute(
        "SELECT j.id, j.status, j.summary, j.recorded_at, t.owed_by, t.owed_to, t.due_at, "
        f"t.due_tz, t.state, {scope_names_column('j')}, "
        "(SELECT json_group_array(observation_id) FROM (SELECT observation_id FROM "
        "commitment_sources s WHERE s.judgment_id = j.id ORDER BY observation_id)) "
        "FROM judgments j JOIN commitment_terms t ON t.judgment_id = j.id "
        f"WHERE j.kind = 'commitment' AND j.status IN ({', '.join('?' for _ in statuses)}) "
        f"AND t.state = ? AND {predicate} "
        "ORDER BY t.due_at IS NULL, t.due_at, j.id LIMIT ?",
        (*statuses, state, *params, limit),
    ).fetchall()
    at = clock.iso(now)
    return [_listed(row, grant, at) for row in rows]


def _listed(row: tuple[Any, ...], grant: Grant, now_iso: str) -> CommitmentEntry:
    due_at = None if row[6] is None else str(row[6])
    state = str(row[8])
    scopes = str(row[9]).split("\x1f") if row[9] else []
    return CommitmentEntry(
        id=int(row[0]),
        status=str(row[1]),
        state=state,
        owed_by=str(row[4]),
        owed_to=str(row[5]),
        summary=str(row[2]),
        due_at=due_at,
        due_tz=None if row[7] is None else str(row[7]),
        overdue=state == OPEN and due_at is not None and due_at < now_iso,
        source_observations=[int(i) for i in json.loads(str(row[10]))],
        scopes=visible_scopes(scopes, grant),
        recorded_at=str(row[3]),
    )
