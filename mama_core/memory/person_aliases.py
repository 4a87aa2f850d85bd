"""The owner's word on who is who: names joined as one person, names split apart.

Sources name people loosely ("Anna", "Anna K.", "anna@corp.example"); only the owner
knows they are one person, so only the owner joins them (``person.join``) or splits
one off again (``person.split``). The joins are an owner setting (``owner_settings``,
key ``people``): each change appends the whole new state with its event, so the
history of who was joined to whom stays, and the latest row is in force.

State: ``groups``, lists of names the owner joined (the first is the name MAMA calls
them by), and ``apart``, names the owner split off: a split name is also cut from the
pairs a source gives (an author line's name and address), or those would join it again.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Annotated

from pydantic import AfterValidator, Field, StringConstraints

from mama_core.errors import InvalidInputError, InvalidTransitionError
from mama_core.json_types import JsonObject
from mama_core.memory.inputs import ActionInput, MutationInput
from mama_core.memory.owner_settings import append_setting, latest_values
from mama_core.memory.person_names import alias_key
from mama_core.store.connection import Connection

PEOPLE_KEY = "people"
"""The ``owner_settings`` key the joins are kept under."""


def _has_words(name: str) -> str:
    if not alias_key(name):
        raise ValueError("a name needs at least one letter or digit")
    return name


PersonName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=200),
    AfterValidator(_has_words),
    Field(description="A person's name or e-mail address, e.g. 'Anna K.' or 'anna@corp.example'."),
]


class PersonAboutInput(ActionInput):
    """person.about: what the memory holds about one person, within your scopes."""

    name: PersonName
    limit: int = Field(20, ge=1, le=200, description="At most this many per section.")


class PersonListInput(ActionInput):
    """person.list: the people known (from commitments, authors, attendees and the
    owner's joins), with how much there is about each, within your scopes."""

    limit: int = Field(500, ge=1, le=5000, description="At most this many people.")


class PersonJoinInput(MutationInput):
    """person.join: the owner says these names are one person (the first is their name)."""

    names: list[PersonName] = Field(min_length=2, max_length=20)


class PersonSplitInput(MutationInput):
    """person.split: the owner says this name is no longer the person it was joined to."""

    name: PersonName


@dataclass(frozen=True)
class Joins:
    """The joins in force: groups of names (first: the person's name) and names apart."""

    groups: tuple[tuple[str, ...], ...] = ()
    apart: tuple[str, ...] = ()

    @cached_property
    def apart_keys(self) -> frozenset[str]:
        """The keys of the names kept apart (read for every name a source gives)."""
        return frozenset(alias_key(n) for n in self.apart)

    def as_value(self) -> JsonObject:
        return {"groups": [list(g) for g in self.groups], "apart": list(self.apart)}

    def joined(self, names: list[str]) -> Joins:
        """These joins with ``names`` made one person: groups sharing a name merge into
        theirs (``names[0]`` first), and none of them stays apart."""
        keys = {alias_key(n) for n in names}
        if len(keys) < 2:
            raise InvalidInputError(
                "Joining needs at least two different names.", details={"fields": ["names"]}
            )
        merged = list(names)
        kept: list[tuple[str, ...]] = []
        for group in self.groups:
            if keys & {alias_key(n) for n in group}:
                merged.extend(group)
            else:
                kept.append(group)
        apart = tuple(n for n in self.apart if alias_key(n) not in keys)
        return Joins((*kept, _distinct(merged)), apart)

    def split(self, name: str, joined_elsewhere: bool) -> Joins:
        """These joins with ``name`` taken out of its group and kept apart.
        ``joined_elsewhere``: a source pairs it with another name (an author line)."""
        key = alias_key(name)
        in_group = any(key in {alias_key(n) for n in g} for g in self.groups)
        if not in_group and not joined_elsewhere:
            raise InvalidTransitionError(
                f"{name!r} is not joined to anyone; there is nothing to split.",
                details={"name": name},
            )
        groups: list[tuple[str, ...]] = []
        for group in self.groups:
            rest = tuple(n for n in group if alias_key(n) != key)
            if len(rest) >= 2:
                groups.append(rest)
        apart = self.apart if key in self.apart_keys else (*self.apart, name)
        return Joins(tuple(groups), apart)


def _distinct(names: list[str]) -> tuple[str, ...]:
    seen: dict[str, str] = {}
    for name in names:
        seen.setdefault(alias_key(name), name)
    return tuple(seen.values())


def read_joins(conn: Connection) -> Joins:
    """The joins in force (none before the owner's first)."""
    value = latest_values(conn).get(PEOPLE_KEY)
    if not isinstance(value, dict):
        return Joins()
    groups = tuple(tuple(str(n) for n in g) for g in value.get("groups", []))  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType, reportUnknownArgumentType]
    apart = tuple(str(n) for n in value.get("apart", []))  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType, reportUnknownArgumentType]
    return Joins(groups, apart)


def write_joins(conn: Connection, joins: Joins, event_id: int, at: str) -> int:
    """Append the new joins (inside the writer's transaction); the row's id."""
    return append_setting(conn, PEOPLE_KEY, joins.as_value(), event_id, at)
