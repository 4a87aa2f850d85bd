"""One view per person: who the memory knows, and what it holds about each, within a grant.

No model: people are the names the store already holds — the parties of commitments,
the authors of connector items, the attendees and organiser of calendar events (any
observation whose metadata has ``attendees``) — tied together where a source gives a
name and an address for one person ("Anna K <anna@corp.example>") and where the owner
joined names (``person_aliases``). What is read is bounded by the reader's grant the
way every read is: judgments by ``scope_filter``, observations by their scope
(``observation_reads.visible_clause``), before any limit; an agent is also shown only
the aliases it could have seen itself, so an address from a foreign channel does not
leak through the person it names.
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, cast

from mama_core import clock
from mama_core.errors import UnknownPersonError
from mama_core.memory.actions.observation_reads import visible_clause
from mama_core.memory.commitments import OPEN, list_commitments
from mama_core.memory.inputs import OWNER_PARTY
from mama_core.memory.person_aliases import Joins, read_joins
from mama_core.memory.person_names import (
    Identity,
    NameIndex,
    alias_key,
    identity_of,
    is_email,
    parse_author,
    words,
)
from mama_core.memory.results import (
    CommitmentEntry,
    Meeting,
    PersonAboutResult,
    PersonCommitments,
    PersonListing,
    PersonMeetings,
    PersonMemory,
    PersonMessage,
    PersonName,
)
from mama_core.scopes.bindings import scope_names_column
from mama_core.scopes.grants import Grant
from mama_core.scopes.reach import scope_filter, visible_scopes
from mama_core.store.connection import Connection

MEMORY_STATUSES = ("active", "proposed")
"""What "memories that name them" lists: beliefs and what waits for the owner."""
MAX_SUGGESTIONS = 5


@dataclass
class Person:
    """One person: the key of the name they are called by and every alias key."""

    name: str
    aliases: list[str]
    keys: frozenset[str]
    joined_by_owner: bool = False

    def named(self) -> PersonName:
        """Who they are, as a read shows it."""
        return PersonName(
            name=self.name, aliases=self.aliases, joined_by_owner=self.joined_by_owner
        )


@dataclass
class _Meeting:
    observation_id: int
    source: str
    external_id: str
    title: str
    start: str
    end: str | None
    all_day: bool
    status: str
    scope: str
    people: list[Identity]
    starts: datetime

    def shown(self) -> Meeting:
        return Meeting(
            observation_id=self.observation_id,
            source=self.source,
            external_id=self.external_id,
            title=self.title,
            start=self.start,
            end=self.end,
            all_day=self.all_day,
            status=self.status,
            scope=self.scope,
        )


@dataclass
class Directory:
    """Everyone a reader may know of, with what names them, read once per request."""

    grant: Grant
    joins: Joins
    spellings: dict[str, Counter[str]] = field(default_factory=dict[str, Counter[str]])
    """Each alias key's spellings as the sources wrote them, with how often."""
    links: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    """Pairs of alias keys a source gives for one person (a name and its address)."""
    authors: dict[str, Identity] = field(default_factory=dict[str, Identity])
    """Each distinct author line of a visible connector item, parsed."""
    message_counts: Counter[str] = field(default_factory=Counter[str])
    """Visible connector items per author line."""
    commitments: list[CommitmentEntry] = field(default_factory=list[CommitmentEntry])
    meetings: list[_Meeting] = field(default_factory=list[_Meeting])

    def seen(self, identity: Identity, times: int = 1) -> None:
        keys = [alias_key(a) for a in identity.aliases()]
        for alias, key in zip(identity.aliases(), keys, strict=True):
            self.spellings.setdefault(key, Counter())[alias] += times
        if len(keys) == 2 and not (set(keys) & self.joins.apart_keys):
            self.links.append((keys[0], keys[1]))

    def people(self) -> list[Person]:
        """The people: alias keys tied by sources and by the owner, one person each."""
        parent: dict[str, str] = {}

        def find(key: str) -> str:
            parent.setdefault(key, key)
            while parent[key] != key:
                parent[key] = parent[parent[key]]
                key = parent[key]
            return key

        def union(a: str, b: str) -> None:
            parent[find(a)] = find(b)

        for key in self.spellings:
            find(key)
        for a, b in self.links:
            union(a, b)
        owner_keys: set[str] = set()
        for group in self.joins.groups:
            keys = [alias_key(n) for n in group]
            for key, name in zip(keys, group, strict=True):
                find(key)
                self.spellings.setdefault(key, Counter()).setdefault(name, 0)
            for key in keys[1:]:
                union(keys[0], key)
            owner_keys.update(keys)
        members: dict[str, list[str]] = {}
        for key in parent:
            members.setdefault(find(key), []).append(key)
        named = {alias_key(g[0]): g[0] for g in self.joins.groups}
        """The name the owner gave each group they joined (its first)."""
        people: list[Person] = []
        for keys in members.values():
            shown = [k for k in keys if self.visible(k)]
            if not shown:
                continue
            given = [named[k] for k in keys if k in named and self.visible(k)]
            name = given[0] if given else self._best_name(shown)
            aliases = sorted((self._spelling(k) for k in shown), key=str.casefold)
            joined = bool(owner_keys.intersection(keys))
            people.append(Person(name, aliases, frozenset(keys), joined_by_owner=joined))
        return people

    def visible(self, key: str) -> bool:
        """Whether the reader may see this alias: the owner sees all; an agent only what
        its own sources name."""
        if self.grant.all_scopes:
            return True
        return sum(self.spellings.get(key, Counter()).values()) > 0

    def _spelling(self, key: str) -> str:
        spellings = self.spellings[key]
        return max(spellings, key=lambda s: (spellings[s], -len(s), s))

    def _best_name(self, keys: list[str]) -> str:
        names = [k for k in keys if not is_email(k)] or keys
        best = max(names, key=lambda k: (sum(self.spellings[k].values()), len(k), k))
        return self._spelling(best)


def read_directory(conn: Connection, grant: Grant, now: datetime | None = None) -> Directory:
    """Who ``grant`` may know of, from the open commitments, connector items and calendar
    events it may read, and the owner's joins (``now``: what overdue is measured by)."""
    directory = Directory(grant, read_joins(conn))
    directory.commitments = list_commitments(
        conn, grant, now=now or clock.now(), state=OPEN, limit=1_000_000
    )
    for row in directory.commitments:
        for party in (row.owed_by, row.owed_to):
            if party and party != OWNER_PARTY:
                directory.seen(parse_author(party))
    visible, params = visible_clause(grant)
    rows = conn.execute(
        "SELECT o.author, count(*) FROM observations o JOIN observation_facets f "
        f"ON f.observation_id = o.id WHERE {visible} AND o.purged_at IS NULL AND o.author != '' "
        "AND json_extract(f.metadata, '$.attendees') IS NULL GROUP BY o.author",
        params,
    ).fetchall()
    for author, count in rows:
        identity = parse_author(str(author))
        directory.authors[str(author)] = identity
        directory.message_counts[str(author)] = int(count)
        directory.seen(identity, int(count))
    directory.meetings = _meetings(conn, grant)
    for meeting in directory.meetings:
        for identity in meeting.people:
            directory.seen(identity)
    return directory


def _meetings(conn: Connection, grant: Grant) -> list[_Meeting]:
    """The calendar events ``grant`` may read (observations whose metadata lists
    attendees), without those a later item of the same source revised or deleted."""
    visible, params = visible_clause(grant)
    rows = conn.execute(
        "SELECT o.id, o.source, o.external_id, o.text, f.scope, f.metadata FROM observations o "
        f"JOIN observation_facets f ON f.observation_id = o.id WHERE {visible} "
        "AND o.purged_at IS NULL AND (json_extract(f.metadata, '$.attendees') IS NOT NULL "
        "OR json_extract(f.metadata, '$.revises') IS NOT NULL "
        "OR json_extract(f.metadata, '$.deletes') IS NOT NULL) ORDER BY o.id",
        params,
    ).fetchall()
    replaced: set[tuple[str, str]] = set()
    found: list[_Meeting] = []
    for oid, source, external_id, text, scope, metadata_text in rows:
        metadata = json.loads(str(metadata_text))
        if not isinstance(metadata, dict):
            continue
        for mark in ("revises", "deletes"):
            if isinstance(metadata.get(mark), str):  # pyright: ignore[reportUnknownMemberType]
                replaced.add((str(source), str(metadata[mark])))  # pyright: ignore[reportUnknownArgumentType]
        meeting = _meeting(int(oid), str(source), str(external_id), str(text), str(scope), metadata)  # pyright: ignore[reportUnknownArgumentType]
        if meeting is not None:
            found.append(meeting)
    return [m for m in found if (m.source, m.external_id) not in replaced]


def _meeting(
    oid: int, source: str, external_id: str, text: str, scope: str, metadata: dict[str, Any]
) -> _Meeting | None:
    attendees = metadata.get("attendees")
    if not isinstance(attendees, list):
        return None
    people = [identity_of(a) for a in cast(list[object], attendees)]
    if metadata.get("organizer"):
        people.append(identity_of(metadata["organizer"]))
    start = str(metadata.get("start") or "")
    starts = _instant(start)
    if starts is None:
        return None
    end = metadata.get("end")
    title = str(metadata.get("summary") or metadata.get("title") or _first_line(text))
    return _Meeting(
        oid,
        source,
        external_id,
        title[:200],
        start,
        None if end is None else str(end),
        bool(metadata.get("all_day")),
        str(metadata.get("status") or ""),
        scope,
        [p for p in people if p.aliases()],
        starts,
    )


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _instant(text: str) -> datetime | None:
    """An event's start as an instant: a time with its offset (naive read as UTC), or a
    date (an all-day event) at its midnight UTC."""
    if not text:
        return None
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            return datetime(day.year, day.month, day.day, tzinfo=UTC)
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _memory_rows(conn: Connection, grant: Grant) -> list[tuple[Any, ...]]:
    predicate, params = scope_filter("j", grant)
    marks = ", ".join("?" for _ in MEMORY_STATUSES)
    return conn.execute(
        f"SELECT j.id, j.kind, j.status, j.summary, j.details, j.topic, j.recorded_at, "
        f"{scope_names_column('j')}, j.involvement FROM judgments j WHERE j.status IN ({marks}) "
        f"AND j.kind != 'commitment' AND {predicate} ORDER BY j.id DESC",
        (*MEMORY_STATUSES, *params),
    ).fetchall()


def _memory_words(row: tuple[Any, ...]) -> list[str]:
    return words(f"{row[5]}\n{row[3]}\n{row[4]}")


def _parties_match(row: CommitmentEntry, keys: frozenset[str], side: str) -> bool:
    party = row.owed_by if side == "owed_by" else row.owed_to
    if not party or party == OWNER_PARTY:
        return False
    return bool({alias_key(a) for a in parse_author(party).aliases()} & keys)


def list_people(conn: Connection, grant: Grant, limit: int = 500) -> list[PersonListing]:
    """Everyone ``grant`` may know of, with how many memories name them, their open
    commitments, messages and meetings; most talked-about first."""
    directory = read_directory(conn, grant)
    people = directory.people()
    by_key = {key: at for at, person in enumerate(people) for key in person.keys}
    index = NameIndex((key, key) for key in by_key)
    memories: Counter[int] = Counter()
    for row in _memory_rows(conn, grant):
        for at in {by_key[k] for k in index.found_in(_memory_words(row))}:
            memories[at] += 1
    commitments: Counter[int] = Counter()
    for row in directory.commitments:
        for at in _row_people(row, by_key):
            commitments[at] += 1
    messages: Counter[int] = Counter()
    for author, identity in directory.authors.items():
        for at in {by_key[alias_key(a)] for a in identity.aliases() if alias_key(a) in by_key}:
            messages[at] += directory.message_counts[author]
    meetings: Counter[int] = Counter()
    for meeting in directory.meetings:
        for at in {
            by_key[alias_key(a)]
            for p in meeting.people
            for a in p.aliases()
            if alias_key(a) in by_key
        }:
            meetings[at] += 1
    listed = [
        PersonListing(
            name=person.name,
            aliases=person.aliases,
            joined_by_owner=person.joined_by_owner,
            memories=memories[at],
            commitments=commitments[at],
            messages=messages[at],
            meetings=meetings[at],
        )
        for at, person in enumerate(people)
    ]
    listed.sort(
        key=lambda p: (-(p.memories + p.commitments + p.messages + p.meetings), p.name.casefold())
    )
    return listed[:limit]


def _row_people(row: CommitmentEntry, by_key: dict[str, int]) -> set[int]:
    found: set[int] = set()
    for party in (row.owed_by, row.owed_to):
        if party and party != OWNER_PARTY:
            found |= {
                by_key[k] for a in parse_author(party).aliases() if (k := alias_key(a)) in by_key
            }
    return found


def about(
    conn: Connection,
    grant: Grant,
    name: str,
    *,
    now: datetime,
    limit: int = 20,
    per_source: int = 5,
) -> PersonAboutResult:
    """What ``grant`` may know about the person called ``name``: who they are (name and
    aliases), the memories that name them, open commitments owed by and to them, their
    latest messages per source, and meetings with them (upcoming first, then recent).

    A name no source gives is still looked for in the memories' words (the owner's own
    notes name people too); if nothing at all names it, ``unknown_person`` with the
    nearest known names."""
    directory = read_directory(conn, grant, now)
    people = directory.people()
    # "Anna K <anna@corp.example>", as an author line gives it, is looked up by both.
    keys = {alias_key(a) for a in parse_author(name).aliases()} or {alias_key(name)}
    person = next((p for p in people if keys & p.keys), None)
    if person is None:
        person = Person(name.strip(), [name.strip()], frozenset(keys))
    index = NameIndex((k, "hit") for k in person.keys)
    memory_rows = [r for r in _memory_rows(conn, grant) if index.found_in(_memory_words(r))]
    memories = [
        PersonMemory(
            id=int(r[0]),
            kind=str(r[1]),
            status=str(r[2]),
            summary=str(r[3]),
            recorded_at=str(r[6]),
            scopes=visible_scopes(str(r[7]).split("\x1f") if r[7] else [], grant),
            involvement=str(r[8]),
        )
        for r in memory_rows[:limit]
    ]
    owed_by = [r for r in directory.commitments if _parties_match(r, person.keys, "owed_by")]
    owed_to = [r for r in directory.commitments if _parties_match(r, person.keys, "owed_to")]
    authors = [
        author
        for author, identity in directory.authors.items()
        if {alias_key(a) for a in identity.aliases()} & person.keys
    ]
    messages = _messages(conn, grant, authors, per_source)
    mine = [
        m
        for m in directory.meetings
        if {alias_key(a) for p in m.people for a in p.aliases()} & person.keys
    ]
    upcoming = sorted((m for m in mine if _ends(m) >= now), key=lambda m: m.starts)
    recent = sorted((m for m in mine if _ends(m) < now), key=lambda m: m.starts, reverse=True)
    # Known: a source or the owner's joins name them, as far as this reader may see.
    known = any(k in directory.spellings and directory.visible(k) for k in person.keys)
    if not (known or memory_rows):
        raise UnknownPersonError(name, suggestions(people, name))
    return PersonAboutResult(
        person=person.named(),
        memories=memories,
        memories_total=len(memory_rows),
        commitments=PersonCommitments(owed_by=owed_by[:limit], owed_to=owed_to[:limit]),
        messages=messages,
        meetings=PersonMeetings(
            upcoming=[m.shown() for m in upcoming[:limit]],
            recent=[m.shown() for m in recent[:limit]],
        ),
    )


def _ends(meeting: _Meeting) -> datetime:
    end = _instant(meeting.end or "")
    return end if end is not None else meeting.starts


def _messages(
    conn: Connection, grant: Grant, authors: list[str], per_source: int
) -> list[PersonMessage]:
    """The latest ``per_source`` visible connector items of each source by ``authors``."""
    if not authors:
        return []
    visible, params = visible_clause(grant)
    marks = ", ".join("?" for _ in authors)
    rows = conn.execute(
        "SELECT id, source, channel, scope, author, text, received_at, external_id FROM "
        "(SELECT o.id, o.source, f.channel, f.scope, o.author, o.text, o.received_at, "
        "o.external_id, row_number() OVER "
        "(PARTITION BY o.source ORDER BY o.received_at DESC, o.id DESC) AS n "
        "FROM observations o JOIN observation_facets f ON f.observation_id = o.id "
        f"WHERE {visible} AND o.purged_at IS NULL AND o.author IN ({marks}) "
        "AND json_extract(f.metadata, '$.attendees') IS NULL) WHERE n <= ? "
        "ORDER BY received_at DESC, id DESC",
        (*params, *authors, per_source),
    ).fetchall()
    return [
        PersonMessage(
            id=int(r[0]),
            source=str(r[1]),
            channel=str(r[2]),
            scope=str(r[3]),
            author=str(r[4]),
            text=str(r[5]),
            received_at=str(r[6]),
            external_id=str(r[7]),
        )
        for r in rows
    ]


def suggestions(people: Iterable[Person], name: str) -> list[str]:
    """Known people whose names are near ``name``: alike in spelling, or a word of one
    beginning as a word of the other does ("Ann" -> "Anna K", "Annabel")."""
    key = alias_key(name)
    wanted = key.split(" ")
    scored: dict[str, float] = {}
    for person in people:
        for alias in person.aliases:
            other = alias_key(alias)
            score = difflib.SequenceMatcher(None, key, other).ratio()
            prefix = any(
                w.startswith(q) or q.startswith(w)
                for w in other.split(" ")
                for q in wanted
                if len(q) >= 2 and len(w) >= 2
            )
            if prefix:
                score = max(score, 0.75)
            if score >= 0.6:
                scored[person.name] = max(scored.get(person.name, 0.0), score)
    return sorted(scored, key=lambda n: (-scored[n], n.casefold()))[:MAX_SUGGESTIONS]
