"""person.list, person.about: the people the memory knows and what it holds about one,
within the caller's scopes; person.join, person.split: the owner's word on which names
are one person (``person_aliases``)."""

from __future__ import annotations

from mama_core import clock
from mama_core.json_types import JsonObject
from mama_core.memory.dispatcher import Call, Env, command_for, mutation, query
from mama_core.memory.people import about, list_people, read_directory
from mama_core.memory.person_aliases import (
    PEOPLE_KEY,
    PersonAboutInput,
    PersonJoinInput,
    PersonListInput,
    PersonSplitInput,
    read_joins,
    write_joins,
)
from mama_core.memory.person_names import alias_key
from mama_core.memory.results import PersonAboutResult, PersonListResult
from mama_core.memory.writer import Applied, Command, Tx
from mama_core.scopes.grants import Grant
from mama_core.store.connection import Connection


@query(
    "person.list",
    PersonListInput,
    description="List the people you may know of (from commitments, message authors, "
    "meeting attendees and the owner's joins) with counts of memories, open commitments, "
    "messages and meetings, within your scopes.",
)
def person_list(conn: Connection, call: Call[PersonListInput], env: Env) -> PersonListResult:
    return PersonListResult(people=list_people(conn, call.grant, call.input.limit))


@query(
    "person.about",
    PersonAboutInput,
    description="What the memory holds about one person, by any of their names or their "
    "e-mail address: memories naming them, open commitments owed by and to them, their "
    "latest messages per source, meetings with them (upcoming first), within your scopes.",
)
def person_about(conn: Connection, call: Call[PersonAboutInput], env: Env) -> PersonAboutResult:
    inp = call.input
    return about(conn, call.grant, inp.name, now=clock.now(), limit=inp.limit)


@mutation(
    "person.join",
    PersonJoinInput,
    description="Join names as one person (the first is the name they are called by).",
    owner_only=True,
)
def person_join_command(call: Call[PersonJoinInput], env: Env) -> Command:
    names = list(call.input.names)

    def apply(tx: Tx) -> Applied:
        joins = read_joins(tx.conn).joined(names)
        write_joins(tx.conn, joins, tx.event_id, tx.at)
        return Applied(None, _event(tx, "joined", names), {"person": names[0]})

    return command_for(call, apply)


@mutation(
    "person.split",
    PersonSplitInput,
    description="Split a name off the person it was joined to; it then stands alone.",
    owner_only=True,
)
def person_split_command(call: Call[PersonSplitInput], env: Env) -> Command:
    name = call.input.name

    def apply(tx: Tx) -> Applied:
        paired = _paired_by_a_source(tx.conn, name)
        joins = read_joins(tx.conn).split(name, paired)
        write_joins(tx.conn, joins, tx.event_id, tx.at)
        return Applied(None, _event(tx, "split", [name]), {"split": name})

    return command_for(call, apply)


def _paired_by_a_source(conn: Connection, name: str) -> bool:
    """Whether a source ties ``name`` to another name (an author's name and address)."""
    key = alias_key(name)
    person = next((p for p in read_directory(conn, Grant.owner()).people() if key in p.keys), None)
    return person is not None and len(person.keys) > 1


def _event(tx: Tx, change: str, names: list[str]) -> JsonObject:
    """A join's or split's event: what changed and the names' keyed hash (names are
    personal: the readable ones stay in the settings row, not in the chained log)."""
    return {"key": PEOPLE_KEY, "change": change, "names_hmac": tx.keyed_hash(names)}
