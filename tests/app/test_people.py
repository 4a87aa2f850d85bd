"""person.about / person.list / person.join / person.split over a real store: names from
commitments, connector authors and calendar attendees (stored through the connectors'
own batch path), whole-word matching, the owner's joins and splits, and the grant."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.connectors.base import Batch, Item
from app.durable.connector_store import ConnectorStore
from app.durable.schema import open_runtime_db
from app.durable.transaction import RuntimeDb
from mama_core.errors import InvalidTransitionError, UnknownPersonError
from mama_core.memory import Engine, Grant, NotGrantedError
from mama_core.memory.person_names import NameIndex, alias_key, parse_author, words
from mama_core.memory.results import PersonAboutResult
from mama_core.memory.taint import carries_outside_words, origin_of_read
from mama_core.store import Store
from tests.app.runtime.support import clock, embedder, engine, store
from tests.mama_core.memory.helpers import AGENT, OWNER, OWNER_GRANT, SOURCE_TURN_AGENT, save

__all__ = ["clock", "embedder", "engine", "store"]

NOW = datetime.now(UTC)
ANNA = "Anna K <anna@corp.example>"


@pytest.fixture
def app_db(store: Store) -> Iterator[RuntimeDb]:
    db = open_runtime_db(store)
    yield db
    db.close()


def stored(app_db: RuntimeDb, *items: Item) -> tuple[int, ...]:
    """Items kept as the connectors keep them (observations with their facets)."""
    batch = Batch(items=tuple(items), cursor=f"c{items[-1].external_id}")
    return ConnectorStore(app_db).store_batch("work", "test", batch).new_ids


def message(
    n: int, author: str, text: str, *, source: str = "slack:T1", scope: str = "channel:slack/#ops"
) -> Item:
    return Item(
        source=source,
        external_id=f"m{n}",
        channel=scope.rsplit("/", 1)[-1],
        scope=scope,
        author=author,
        at=NOW - timedelta(hours=10 - n),
        text=text,
    )


def event(
    n: int, title: str, start: datetime, attendees: list[dict[str, str]], **meta: Any
) -> Item:
    metadata = {
        "kind": "event",
        "start": start.isoformat(),
        "end": (start + timedelta(hours=1)).isoformat(),
        "all_day": False,
        "organizer": {"name": "Me", "email": "me@corp.example"},
        "attendees": attendees,
        "status": "confirmed",
        **meta,
    }
    return Item(
        source="calendar:work",
        external_id=f"e{n}",
        channel="Work",
        scope="channel:calendar/work",
        author="Me <me@corp.example>",
        at=NOW - timedelta(days=3),
        text=f"{title}\nAttendees: …",
        metadata=metadata,
    )


def about(
    engine: Engine, name: str, grant: Grant = OWNER_GRANT, session: Any = OWNER
) -> dict[str, Any]:
    return engine.dispatch("person.about", {"name": name}, session, grant)


def commitment(engine: Engine, summary: str, owed_by: str, owed_to: str, **fields: Any) -> int:
    terms = {"owed_by": owed_by, "owed_to": owed_to}
    return save(engine, summary, kind="commitment", commitment=terms, **fields)["judgment_id"]


def summaries(found: dict[str, Any]) -> list[str]:
    return [m["summary"] for m in found["memories"]]


def test_names_are_whole_words_case_and_accent_blind_and_addresses_exact() -> None:
    index = NameIndex([(alias_key("Anna"), "anna"), (alias_key("anna@corp.example"), "mail")])
    assert index.found_in(words("Ask ÁNNA's team")) == {"anna"}  # positive control
    for text in ("Annabel said so", "Anna-Lena said so", "Hanna said so"):
        assert index.found_in(words(text)) == set(), text
    assert index.found_in(words("write to anna@corp.example.")) == {"mail"}
    assert index.found_in(words("write to anna@corp.example.org")) == set()
    assert index.found_in(words("write to xanna@corp.example")) == set()
    assert alias_key("Anna K.") == alias_key("anna  k") == "anna k"
    assert parse_author(ANNA).aliases() == ["Anna K", "anna@corp.example"]
    assert parse_author('"Kowalska, Anna" <Anna@Corp.example>').name == "Kowalska, Anna"


LETTERS = st.text(alphabet="abcdefghijklmnopqrstuvwxyzäéñ", min_size=2, max_size=8)
OTHER = st.text(alphabet="0123456789 ,.!?()", max_size=12)


@settings(max_examples=200, deadline=None)
@given(name=LETTERS, tail=LETTERS, before=OTHER, after=OTHER)
def test_a_name_is_found_only_as_a_whole_word(
    name: str, tail: str, before: str, after: str
) -> None:
    index = NameIndex([(alias_key(name), "them")])
    # Positive control: the name itself, in capitals, before a possessive.
    assert index.found_in(words(f"{before} {name.upper()}'s {after}")) == {"them"}
    # Longer words that begin or end with it, or join it with a hyphen, are others.
    for other in (name + tail, tail + name, f"{name}-{tail}"):
        assert index.found_in(words(f"{before} {other} {after}")) == set(), other


def test_memories_name_a_person_by_any_alias_but_not_annabel(
    engine: Engine, app_db: RuntimeDb
) -> None:
    save(engine, "Anna prefers written updates over calls")
    save(engine, "Annabel runs the Lisbon office")
    save(engine, "Ánna K. owns the release checklist")
    save(engine, "Send the invoices to anna@corp.example.org")
    stored(app_db, message(1, ANNA, "I'll look at the budget"))

    # Before a join, "Anna K" (an author) is one person and the bare "Anna" another.
    found = about(engine, "Anna K")
    assert found["person"]["name"] == "Anna K"
    assert found["person"]["aliases"] == ["Anna K", "anna@corp.example"]
    assert summaries(found) == ["Ánna K. owns the release checklist"]
    bare = about(engine, "anna")  # not a known alias, but the owner's words name her
    assert summaries(bare) == [  # newest first; the word "Anna" is in both
        "Ánna K. owns the release checklist",
        "Anna prefers written updates over calls",
    ]
    assert bare["person"]["aliases"] == ["anna"]

    receipt = engine.dispatch("person.join", {"names": ["Anna K", "Anna"]}, OWNER, OWNER_GRANT)
    assert receipt["event_id"] > 0
    for name in ("Anna", "anna k.", "ANNA@corp.example", "Anna K. <anna@corp.example>"):
        joined = about(engine, name)
        assert joined["person"]["name"] == "Anna K", name
        assert joined["person"]["aliases"] == ["Anna", "Anna K", "anna@corp.example"]
        assert sorted(summaries(joined)) == [
            "Anna prefers written updates over calls",
            "Ánna K. owns the release checklist",
        ]
    # Annabel is someone else, and an address that only begins like hers is not hers.
    assert "Annabel runs the Lisbon office" in summaries(about(engine, "Annabel"))


def test_a_foreign_scope_s_memory_about_her_stays_out_of_an_agent_s_view(
    engine: Engine, app_db: RuntimeDb
) -> None:
    save(engine, "Anna approved the Q3 hiring plan", scopes=["project:hiring"])
    save(engine, "Anna reviews the ops runbook", scopes=["channel:slack/#ops"])
    stored(
        app_db,
        message(1, "Anna", "runbook is done"),
        message(
            2, "Anna <anna@hiring.example>", "offer letters out", scope="channel:slack/#hiring"
        ),
    )
    ops = Grant.agent(["channel:slack/#ops"])
    seen = about(engine, "Anna", ops, AGENT)
    assert summaries(seen) == ["Anna reviews the ops runbook"]  # the granted one: shown
    assert [m["text"] for m in seen["messages"]] == ["runbook is done"]
    assert "anna@hiring.example" not in str(seen)  # not even her foreign address
    # Positive control: the owner, and an agent granted hiring, see the hiring memory.
    assert "Anna approved the Q3 hiring plan" in summaries(about(engine, "Anna"))
    hiring = about(engine, "Anna", Grant.agent(["project:hiring", "channel:slack/#hiring"]), AGENT)
    assert summaries(hiring) == ["Anna approved the Q3 hiring plan"]
    assert [m["text"] for m in hiring["messages"]] == ["offer letters out"]
    # Nothing granted: she is unknown, not an empty page that proves she exists, even
    # with the owner's join naming her.
    engine.dispatch("person.join", {"names": ["Anna", "Anna Kowalska"]}, OWNER, OWNER_GRANT)
    with pytest.raises(UnknownPersonError):
        about(engine, "Anna Kowalska", Grant.agent(["project:elsewhere"]), AGENT)
    assert about(engine, "Anna Kowalska")["person"]["name"] == "Anna"  # the owner: known
    assert about(engine, "Anna Kowalska", ops, AGENT)["person"]["aliases"] == ["Anna"]


def test_commitments_to_and_from_her(engine: Engine) -> None:
    to_her = commitment(engine, "Send Anna the deck", "owner", "Anna K.")
    from_her = commitment(engine, "Review the contract", "anna@corp.example", "owner")
    commitment(engine, "Book the venue", "owner", "Annabel")
    engine.dispatch("person.join", {"names": ["Anna K.", "anna@corp.example"]}, OWNER, OWNER_GRANT)
    found = about(engine, "Anna K")
    assert [c["id"] for c in found["commitments"]["owed_to"]] == [to_her]
    assert [c["id"] for c in found["commitments"]["owed_by"]] == [from_her]
    closed = engine.dispatch(
        "commitment.close", {"id": to_her, "outcome": "done"}, OWNER, OWNER_GRANT
    )
    assert closed["state"] == "done"
    after = about(engine, "Anna K")
    assert after["commitments"]["owed_to"] == []  # only open ones
    assert [c["id"] for c in after["commitments"]["owed_by"]] == [from_her]


def test_her_latest_messages_per_source(engine: Engine, app_db: RuntimeDb) -> None:
    stored(app_db, *(message(n, ANNA, f"slack {n}") for n in range(1, 8)))
    stored(app_db, message(1, "Bob <bob@corp.example>", "not hers", source="slack:T2"))
    stored(
        app_db,
        message(
            20,
            "anna@corp.example",
            "mail from her",
            source="mail:me",
            scope="channel:mail/me/INBOX",
        ),
    )
    found = engine.dispatch("person.about", {"name": "Anna K"}, OWNER, OWNER_GRANT)
    texts = [m["text"] for m in found["messages"]]  # newest first, 5 per source
    assert texts == ["mail from her", "slack 7", "slack 6", "slack 5", "slack 4", "slack 3"]
    assert found["messages"][0]["source"] == "mail:me"  # her address, another source


def test_meetings_come_from_observation_metadata_upcoming_first(
    engine: Engine, app_db: RuntimeDb
) -> None:
    anna = {"name": "Anna K", "email": "anna@corp.example"}
    bob = {"name": "Bob", "email": "bob@corp.example"}
    stored(
        app_db,
        event(1, "Planning", NOW + timedelta(days=2), [anna, bob]),
        event(2, "Retro", NOW - timedelta(days=1), [anna]),
        event(3, "1:1 Bob", NOW + timedelta(days=1), [bob]),
        event(4, "Kickoff", NOW + timedelta(days=1), [{"email": "mailto:anna@corp.example"}]),
        event(5, "Old sync", NOW - timedelta(days=9), [anna]),
        event(6, "Planning (moved)", NOW + timedelta(days=3), [anna, bob], revises="e1"),
    )
    found = about(engine, "anna@corp.example")
    assert [m["title"] for m in found["meetings"]["upcoming"]] == ["Kickoff", "Planning (moved)"]
    assert [m["title"] for m in found["meetings"]["recent"]] == ["Retro", "Old sync"]
    listed = {
        p["name"]: p for p in engine.dispatch("person.list", {}, OWNER, OWNER_GRANT)["people"]
    }
    assert listed["Anna K"]["meetings"] == 4 and listed["Bob"]["meetings"] == 2


def test_list_counts_and_an_unknown_name_suggests_near_ones(
    engine: Engine, app_db: RuntimeDb
) -> None:
    commitment(engine, "Send Anna K the deck", "owner", "Anna K")
    save(engine, "Anna K likes short decks")
    stored(app_db, message(1, ANNA, "thanks"), message(2, "Annabel", "hello"))
    people = engine.dispatch("person.list", {}, OWNER, OWNER_GRANT)["people"]
    assert [(p["name"], p["memories"], p["commitments"], p["messages"]) for p in people] == [
        ("Anna K", 1, 1, 1),
        ("Annabel", 0, 0, 1),
    ]
    with pytest.raises(UnknownPersonError) as unknown:
        about(engine, "Ana")
    assert unknown.value.code == "unknown_person"
    assert unknown.value.details["suggestions"][:2] == ["Anna K", "Annabel"]
    assert "Did you mean 'Anna K', 'Annabel'?" in unknown.value.message


def test_join_and_split_are_the_owner_s_and_leave_events(engine: Engine, app_db: RuntimeDb) -> None:
    stored(app_db, message(1, ANNA, "hi"), message(2, "Anna", "hello"))
    events = lambda: int(engine.store.conn.execute("SELECT count(*) FROM events").fetchone()[0])  # noqa: E731
    before = events()
    with pytest.raises(NotGrantedError):
        engine.dispatch(
            "person.join", {"names": ["Anna", "Anna K"]}, AGENT, Grant.agent(["global"])
        )
    engine.dispatch("person.join", {"names": ["Anna", "Anna K"]}, OWNER, OWNER_GRANT)
    assert len(about(engine, "Anna")["messages"]) == 2
    # Splitting the address off: it no longer brings in her name's messages.
    engine.dispatch("person.split", {"name": "anna@corp.example"}, OWNER, OWNER_GRANT)
    alone = about(engine, "anna@corp.example")
    assert alone["person"]["aliases"] == ["anna@corp.example"]
    assert about(engine, "Anna")["person"]["aliases"] == ["Anna", "Anna K"]
    engine.dispatch("person.split", {"name": "Anna K"}, OWNER, OWNER_GRANT)
    assert about(engine, "Anna")["person"]["aliases"] == ["Anna"]
    with pytest.raises(InvalidTransitionError):
        engine.dispatch("person.split", {"name": "Anna"}, OWNER, OWNER_GRANT)
    # Joining again brings a split name back.
    engine.dispatch("person.join", {"names": ["Anna", "anna@corp.example"]}, OWNER, OWNER_GRANT)
    assert about(engine, "Anna")["person"]["aliases"] == ["Anna", "anna@corp.example"]
    assert events() == before + 4  # one per change, none for the refusals
    rows = engine.store.conn.execute("SELECT count(*) FROM owner_settings WHERE key = 'people'")
    assert rows.fetchone()[0] == 4  # appended, never changed in place


def test_a_page_with_her_messages_taints_the_turn_one_with_only_the_owners_words_does_not(
    engine: Engine, app_db: RuntimeDb
) -> None:
    save(engine, "Anna prefers written updates over calls")
    save(engine, "Bob owns the release checklist")
    stored(app_db, message(1, "Bob", "ship it"))
    ops = Grant.agent(["global", "channel:slack/#ops"])
    owners_words = about(engine, "Anna", ops, AGENT)
    assert summaries(owners_words) == ["Anna prefers written updates over calls"]
    assert not carries_outside_words("person.about", owners_words)
    with_messages = about(engine, "Bob", ops, AGENT)
    assert [m["text"] for m in with_messages["messages"]] == ["ship it"]
    assert carries_outside_words("person.about", with_messages)
    assert origin_of_read("person.about", with_messages) == "#ops (slack:T1)"
    # A memory saved from a source is a claim too, messages or not.
    save(
        engine,
        "Anna says the budget is approved",
        session=SOURCE_TURN_AGENT,
        grant=Grant.agent(["global"]),
    )
    claimed = about(engine, "Anna", ops, AGENT)
    assert claimed["messages"] == [] and len(claimed["memories"]) == 2
    assert carries_outside_words("person.about", claimed)


def test_about_wire_is_the_old_dict(engine: Engine, app_db: RuntimeDb) -> None:
    """person.about's result model gives exactly the dict the handler used to build: the
    same keys in the same order at every level, the same values, the same JSON bytes."""
    anna = {"name": "Anna K", "email": "anna@corp.example"}
    (said,) = stored(app_db, message(1, ANNA, "the deck is late"))
    (met,) = stored(app_db, event(2, "Planning", NOW + timedelta(days=2), [anna]))
    owed = commitment(engine, "Send Anna K the deck", "owner", "Anna K")
    noted = save(engine, "Anna K likes short decks")["judgment_id"]
    got = about(engine, "Anna K")
    (listed,) = engine.dispatch("commitment.list", {}, OWNER, OWNER_GRANT)["commitments"]
    rows = {
        int(r[0]): r
        for r in engine.store.conn.execute(
            "SELECT id, received_at, external_id FROM observations"
        ).fetchall()
    }
    recorded = dict(engine.store.conn.execute("SELECT id, recorded_at FROM judgments").fetchall())
    start = (NOW + timedelta(days=2)).isoformat()
    expected = {
        "person": {"name": "Anna K", "aliases": got["person"]["aliases"], "joined_by_owner": False},
        "memories": [
            {
                "id": noted,
                "kind": "fact",
                "status": "active",
                "summary": "Anna K likes short decks",
                "recorded_at": recorded[noted],
                "scopes": ["global"],
                "involvement": "owner_stated",
            }
        ],
        "memories_total": 1,  # the commitment is under commitments
        "commitments": {"owed_by": [], "owed_to": [listed]},
        "messages": [
            {
                "id": said,
                "source": "slack:T1",
                "channel": "#ops",
                "scope": "channel:slack/#ops",
                "author": ANNA,
                "text": "the deck is late",
                "received_at": rows[said][1],
                "external_id": "m1",
            }
        ],
        "meetings": {
            "upcoming": [
                {
                    "observation_id": met,
                    "source": "calendar:work",
                    "external_id": "e2",
                    "title": "Planning",
                    "start": start,
                    "end": (NOW + timedelta(days=2, hours=1)).isoformat(),
                    "all_day": False,
                    "status": "confirmed",
                    "scope": "channel:calendar/work",
                }
            ],
            "recent": [],
        },
    }
    assert "Anna K" in got["person"]["aliases"] and listed["id"] == owed
    assert got == expected
    assert json.dumps(got) == json.dumps(expected)  # key order too, at every level
    assert json.dumps(PersonAboutResult.model_validate(got).to_wire()) == json.dumps(got)
