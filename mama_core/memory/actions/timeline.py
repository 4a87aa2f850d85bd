"""memory.timeline: the two time axes.

*Record time*: the status of every judgment is rebuilt from the event log up to
an instant T (each event lists its status transitions), answering "what did the
store believe at T, and which events changed that". *World time*: a judgment
held at V when ``valid_from <= V < valid_until``. Both may be asked together:
what the store, at T, believed held at V.

A range ``from_time``/``to_time`` asks both axes over a span: the beliefs that held
at some instant of it, and those an event changed in it (a fact about 2020 recorded
this week), with only the events of the span.
"""

from __future__ import annotations

import json
from typing import Any

from mama_core import clock
from mama_core.memory.actions.memory_read import events_touching
from mama_core.memory.dispatcher import Call, Env, query
from mama_core.memory.events import RecordState, fold_events
from mama_core.memory.inputs import TimelineInput
from mama_core.memory.records import summary_of
from mama_core.memory.results import TimelineRecord, TimelineResult
from mama_core.model import WORLD_STATUSES, Judgment, select_columns
from mama_core.scopes.bindings import scopes_by_id
from mama_core.scopes.reach import read_scopes, scope_filter
from mama_core.store.connection import Connection

_WORLD = frozenset(s.value for s in WORLD_STATUSES)


@query(
    "memory.timeline",
    TimelineInput,
    description=(
        "What the store believed at a past time and why it changed, or what held "
        "in the world at a time."
    ),
)
def timeline(conn: Connection, call: Call[TimelineInput], env: Env) -> TimelineResult:
    inp = call.input
    grant = read_scopes(call.grant, inp.scopes)
    recorded = None if inp.as_recorded_at is None else clock.iso(inp.as_recorded_at)
    valid = None if inp.valid_at is None else clock.iso(inp.valid_at)
    period = _period(inp)
    changed = set[int]() if period is None else _changed_between(conn, period)
    predicate, params = scope_filter("j", grant)
    where = [predicate]
    if inp.id is not None:
        where.append("j.id = ?")
        params.append(inp.id)
    if inp.kinds is not None:
        where.append("j.kind IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(sorted({k.value for k in inp.kinds})))
    states: dict[int, RecordState] | None = None
    if recorded is not None:
        states = fold_events(conn, recorded)
        where.append("j.id IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(sorted(states)))
    rows = conn.execute(
        f"SELECT {select_columns('j')} FROM judgments j WHERE {' AND '.join(where)} "
        "ORDER BY j.recorded_at DESC, j.id DESC",
        params,
    ).fetchall()
    chosen: list[tuple[Judgment, str, str | None]] = []
    for row in rows:
        j = Judgment.from_row(row)
        status, until = j.status, j.valid_until
        if states is not None:
            status, until = states[j.id].status, states[j.id].valid_until
        if inp.id is None and not _wanted(j, status, until, valid, period, changed):
            continue
        chosen.append((j, status, until))
        if len(chosen) >= inp.limit:
            break
    scopes = scopes_by_id(conn, [j.id for j, _, _ in chosen])
    records: list[TimelineRecord] = []
    for j, status, until in chosen:
        entry: dict[str, Any] = {
            **summary_of(j, scopes.get(j.id, []), grant).model_dump(),
            "status_then": status,
            "valid_until_then": until,
            "held_at_valid_at": None if valid is None else _holds(j.valid_from, until, valid),
        }
        if period is not None:
            entry["held_in_range"] = status in _WORLD and _overlaps(j.valid_from, until, period)
            entry["changed_in_range"] = j.id in changed
        records.append(TimelineRecord(**entry))
    events: list[dict[str, Any]] = []
    for j, _, _ in chosen:
        events += events_touching(conn, j.id, grant, recorded)
    if period is not None:
        events = [e for e in events if period[0] <= e["at"] < period[1]]
    events = sorted({e["id"]: e for e in events}.values(), key=lambda e: e["id"])
    return TimelineResult(
        as_recorded_at=recorded,
        valid_at=valid,
        from_time=None if period is None else period[0],
        to_time=None if period is None else period[1],
        records=records,
        events=events,
    )


def _period(inp: TimelineInput) -> tuple[str, str] | None:
    if inp.from_time is None or inp.to_time is None:
        return None
    return clock.iso(inp.from_time), clock.iso(inp.to_time)


def _changed_between(conn: Connection, period: tuple[str, str]) -> set[int]:
    """The judgments an event in ``period`` created or changed (its record, or one it
    lists as touched)."""
    rows = conn.execute(
        "SELECT e.judgment_id FROM events e WHERE e.at >= ? AND e.at < ? "
        "AND e.judgment_id IS NOT NULL UNION SELECT t.value FROM events e, "
        "json_each(e.payload, '$.touched') t WHERE e.at >= ? AND e.at < ?",
        (*period, *period),
    ).fetchall()
    return {int(r[0]) for r in rows if isinstance(r[0], int)}


def _wanted(
    j: Judgment,
    status: str,
    until: str | None,
    valid: str | None,
    period: tuple[str, str] | None,
    changed: set[int],
) -> bool:
    if period is not None:
        return status in _WORLD and (_overlaps(j.valid_from, until, period) or j.id in changed)
    if valid is None:
        return status == "active"
    return status in _WORLD and _holds(j.valid_from, until, valid)


def _overlaps(valid_from: str, valid_until: str | None, period: tuple[str, str]) -> bool:
    """Held at some instant of ``[start, end)``."""
    start, end = period
    return valid_from < end and (valid_until is None or valid_until > start)


def _holds(valid_from: str, valid_until: str | None, at: str) -> bool:
    return valid_from <= at and (valid_until is None or at < valid_until)
