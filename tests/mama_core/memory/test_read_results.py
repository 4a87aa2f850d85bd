"""The read actions' result models: each read returns its pydantic model, and the wire
form agents, MCP clients and ``--json`` see (``Engine.dispatch``) is exactly the dict
the handler used to build: the same keys, in the same order, the same values, the
same JSON bytes. Each expected dict below is written out from the store the test
made, in the order the old handlers built it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mama_core.memory import Engine, EngineError
from mama_core.memory.results import (
    CheckpointListResult,
    CommitmentListResult,
    GuidanceChangesResult,
    MemoryReadResult,
    ObservationCountsResult,
    ObservationListResult,
    ObservationReadResult,
    OwnerSettingsResult,
    PersonListResult,
    QuotesResult,
    SearchResult,
    TimelineResult,
    TombstoneListResult,
)
from tests.mama_core.memory.helpers import AGENT, OWNER, OWNER_GRANT, agent_grant, save

TAINTED = AGENT.with_taint("#ops (slack:T1)")


def _same_wire(got: dict[str, Any], expected: dict[str, Any]) -> None:
    assert got == expected
    assert json.dumps(got) == json.dumps(expected)  # key order too, at every level


def _at(engine: Engine, event_id: int) -> str:
    (at,) = engine.store.conn.execute("SELECT at FROM events WHERE id = ?", (event_id,)).fetchone()
    return str(at)


def test_tombstone_list_wire_is_the_old_dict(engine: Engine) -> None:
    kept = save(engine, "The cabin key is under the mat")
    retired = engine.dispatch(
        "memory.retire",
        {"id": kept["judgment_id"], "reason": "moved it", "forbid_resave": True},
        OWNER,
        OWNER_GRANT,
    )
    got = engine.dispatch("tombstone.list", {}, OWNER, OWNER_GRANT)
    actor = OWNER.actor_json()
    owner = {k: actor.get(k) for k in ("kind", "name", "turn")}
    expected = {
        "tombstones": [
            {
                "id": retired["tombstone_id"],
                "judgment_id": kept["judgment_id"],
                "kind": "fact",
                "status": "stale",
                "text": "The cabin key is under the mat",
                "text_erased": False,
                "scopes": ["global"],
                "reason": "moved it",
                "created_at": _at(engine, retired["event_id"]),
                "created_by": owner,
                "made_by_action": "memory.retire",
                "lifted": False,
                "lifted_at": None,
                "lifted_by": None,
                "lift_reason": None,
            }
        ]
    }
    _same_wire(got, expected)
    assert TombstoneListResult.model_validate(got).to_wire() == got
    # Lifted: the lift's fields are filled; left out when not asked for (the empty list).
    engine.dispatch(
        "tombstone.lift",
        {"tombstone_id": retired["tombstone_id"], "reason": "found it"},
        OWNER,
        OWNER_GRANT,
    )
    unlifted = engine.dispatch("tombstone.list", {"include_lifted": False}, OWNER, OWNER_GRANT)
    assert unlifted == {"tombstones": []}
    lifted = engine.dispatch("tombstone.list", {}, OWNER, OWNER_GRANT)
    (entry,) = lifted["tombstones"]
    assert entry["lifted"] is True and entry["lift_reason"] == "found it"
    assert entry["lifted_by"] == owner
    assert list(entry) == list(expected["tombstones"][0])


def test_commitment_list_wire_is_the_old_dict(engine: Engine) -> None:
    saved = engine.dispatch(
        "memory.save",
        {
            "kind": "commitment",
            "summary": "Send Dana the deck",
            "commitment": {"owed_to": "Dana", "due": "2026-12-05T17:00:00+01:00"},
        },
        OWNER,
        OWNER_GRANT,
    )
    got = engine.dispatch("commitment.list", {}, OWNER, OWNER_GRANT)
    (row,) = engine.store.conn.execute(
        "SELECT due_at, due_tz FROM commitment_terms WHERE judgment_id = ?",
        (saved["judgment_id"],),
    ).fetchall()
    expected = {
        "commitments": [
            {
                "id": saved["judgment_id"],
                "status": "active",
                "state": "open",
                "owed_by": "owner",
                "owed_to": "Dana",
                "summary": "Send Dana the deck",
                "due_at": row[0],
                "due_tz": row[1],
                "overdue": got["commitments"][0]["overdue"],
                "source_observations": [],
                "scopes": ["global"],
                "recorded_at": saved["at"],
            }
        ]
    }
    _same_wire(got, expected)
    assert isinstance(got["commitments"][0]["overdue"], bool)
    assert CommitmentListResult.model_validate(got).to_wire() == got
    assert engine.dispatch("commitment.list", {"state": "done"}, OWNER, OWNER_GRANT) == {
        "commitments": []
    }


def test_checkpoint_list_wire_is_the_old_dict(engine: Engine) -> None:
    state = {"next": ["write the tests"], "files": {"a.py": 3}, "done": None}
    saved = engine.dispatch(
        "checkpoint.save", {"summary": "Halfway through", "state": state}, OWNER, OWNER_GRANT
    )
    got = engine.dispatch("checkpoint.list", {}, OWNER, OWNER_GRANT)
    stored_state, provenance = engine.store.conn.execute(
        "SELECT state, provenance FROM checkpoints WHERE id = ?", (saved["checkpoint_id"],)
    ).fetchone()
    assert json.loads(stored_state) == state
    expected = {
        "checkpoints": [
            {
                "id": saved["checkpoint_id"],
                "scope": "global",
                "summary": "Halfway through",
                "state": json.loads(stored_state),  # as stored (its keys sorted)
                "created_at": saved["at"],
                "provenance": json.loads(provenance),
            }
        ],
        "count": 1,
    }
    _same_wire(got, expected)
    assert CheckpointListResult.model_validate(got).to_wire() == got


SUMMARY_KEYS = [
    "id",
    "kind",
    "topic",
    "summary",
    "details",
    "applies_when",
    "steps",
    "confidence",
    "status",
    "scopes",
    "valid_from",
    "valid_until",
    "recorded_at",
    "involvement",
    "origin",
]


def test_timeline_wire_is_the_old_dict(engine: Engine) -> None:
    old = save(engine, "The office is in Oslo", confidence=0.75)
    new = engine.dispatch(
        "memory.save",
        {"kind": "fact", "summary": "The office is in Bergen", "replaces": [old["judgment_id"]]},
        OWNER,
        OWNER_GRANT,
    )
    now = engine.dispatch("memory.timeline", {}, OWNER, OWNER_GRANT)
    assert list(now) == [
        "as_recorded_at",
        "valid_at",
        "from_time",
        "to_time",
        "records",
        "events",
    ]
    assert (now["as_recorded_at"], now["valid_at"], now["from_time"], now["to_time"]) == (
        None,
        None,
        None,
        None,
    )
    (record,) = now["records"]
    assert list(record) == [*SUMMARY_KEYS, "status_then", "valid_until_then", "held_at_valid_at"]
    read = engine.dispatch("memory.read", {"id": new["judgment_id"]}, OWNER, OWNER_GRANT)
    assert {k: record[k] for k in SUMMARY_KEYS} == {k: read["record"][k] for k in SUMMARY_KEYS}
    assert (record["status_then"], record["valid_until_then"], record["held_at_valid_at"]) == (
        "active",
        None,
        None,
    )
    assert [e["id"] for e in now["events"]] == [new["event_id"]]
    assert now["events"] == sorted(
        {e["id"]: e for e in read["events"]}.values(), key=lambda e: e["id"]
    )
    assert TimelineResult.model_validate(now).to_wire() == now
    assert json.dumps(TimelineResult.model_validate(now).to_wire()) == json.dumps(now)

    # At the first save's instant, over a range: the old record, the range's own fields.
    then = engine.dispatch(
        "memory.timeline",
        {"as_recorded_at": old["at"], "from_time": "2000-01-01T00:00:00Z", "to_time": new["at"]},
        OWNER,
        OWNER_GRANT,
    )
    (past,) = then["records"]
    assert past["id"] == old["judgment_id"] and past["confidence"] == 0.75
    assert list(past)[-5:] == [
        "status_then",
        "valid_until_then",
        "held_at_valid_at",
        "held_in_range",
        "changed_in_range",
    ]
    assert past["status_then"] == "active" and past["status"] == "superseded"
    assert (past["held_in_range"], past["changed_in_range"]) == (True, True)
    assert [e["id"] for e in then["events"]] == [old["event_id"]]
    assert json.dumps(TimelineResult.model_validate(then).to_wire()) == json.dumps(then)


def test_memory_read_wire_is_the_old_dict(engine: Engine) -> None:
    first = engine.dispatch(
        "memory.save",
        {"kind": "commitment", "summary": "Send Dana the deck", "commitment": {"owed_to": "Dana"}},
        OWNER,
        OWNER_GRANT,
    )
    second = engine.dispatch(
        "memory.save",
        {
            "kind": "commitment",
            "summary": "Send Dana the deck and the notes",
            "commitment": {"owed_to": "Dana"},
            "replaces": [first["judgment_id"]],
        },
        OWNER,
        OWNER_GRANT,
    )
    rule = save(engine, "Never deploy on Fridays", "constraint", confidence=0.5)
    proposal = engine.dispatch(
        "memory.retire",
        {"id": rule["judgment_id"], "reason": "we ship daily"},
        AGENT,
        agent_grant(),
    )
    assert proposal["proposed"] is True

    full = [
        *SUMMARY_KEYS,
        "superseded_by",
        "outcome",
        "provenance",
        "command_id",
        "content_hash",
        "pending_change",
        "allowed",
        "evidence",
    ]
    read = engine.dispatch("memory.read", {"id": second["judgment_id"]}, OWNER, OWNER_GRANT)
    assert list(read) == ["record", "history", "events"]
    assert list(read["record"]) == [*full, "commitment"]
    (past,) = read["history"]
    assert list(past) == [*SUMMARY_KEYS, "relation", "replaced_by", "commitment"]
    assert (past["id"], past["relation"]) == (first["judgment_id"], "replaced")
    assert read["record"]["commitment"]["owed_to"] == "Dana"
    for wire in (
        read,
        engine.dispatch("memory.read", {"id": rule["judgment_id"]}, OWNER, OWNER_GRANT),
    ):
        assert json.dumps(MemoryReadResult.model_validate(wire).to_wire()) == json.dumps(wire)
    waiting = engine.dispatch("memory.read", {"id": rule["judgment_id"]}, OWNER, OWNER_GRANT)
    assert list(waiting["record"]) == full  # no commitment key on a plain record
    assert waiting["record"]["pending_change"]["id"] == proposal["change_id"]
    assert waiting["record"]["confidence"] == 0.5 and waiting["history"] == []
    # An agent's read: the change only as waiting, its own allowed verbs.
    seen = engine.dispatch("memory.read", {"id": rule["judgment_id"]}, AGENT, agent_grant())
    assert json.dumps(MemoryReadResult.model_validate(seen).to_wire()) == json.dumps(seen)


def test_memory_search_wire_is_the_old_dict(engine: Engine) -> None:
    fact = save(engine, "The staging database runs on port 5433", confidence=0.9)
    engine.dispatch(
        "memory.save",
        {"kind": "commitment", "summary": "Move the staging database", "commitment": {}},
        OWNER,
        OWNER_GRANT,
    )
    listing = engine.dispatch("memory.search", {"query": ""}, OWNER, OWNER_GRANT)
    ranked = engine.dispatch("memory.search", {"query": "staging database"}, OWNER, OWNER_GRANT)
    assert list(listing) == ["results", "count"] and listing["count"] == 2
    plain = next(h for h in listing["results"] if h["id"] == fact["judgment_id"])
    assert list(plain) == [*SUMMARY_KEYS, "allowed"]
    owed = next(h for h in listing["results"] if h["kind"] == "commitment")
    assert list(owed) == [*SUMMARY_KEYS, "commitment", "allowed"]
    hit = next(h for h in ranked["results"] if h["id"] == fact["judgment_id"])
    no_confidence = [k for k in SUMMARY_KEYS if k != "confidence"]
    assert list(hit) == [*no_confidence, "label", "score", "found_by", "allowed"]
    for wire in (listing, ranked):
        assert json.dumps(SearchResult.model_validate(wire).to_wire()) == json.dumps(wire)

    newer = engine.dispatch(
        "memory.save",
        {
            "kind": "fact",
            "summary": "The staging database runs on port 5434",
            "replaces": [fact["judgment_id"]],
        },
        OWNER,
        OWNER_GRANT,
    )
    history = engine.dispatch(
        "memory.search",
        {"query": "staging database port", "include_history": True},
        OWNER,
        OWNER_GRANT,
    )
    old = next(h for h in history["results"] if h["id"] == fact["judgment_id"])
    assert old["replaced_by"] == newer["judgment_id"]
    assert list(old) == [*no_confidence, "label", "score", "found_by", "replaced_by", "allowed"]
    assert json.dumps(SearchResult.model_validate(history).to_wire()) == json.dumps(history)


def test_read_as_gives_the_model_whose_wire_dispatch_gives(engine: Engine) -> None:
    saved = save(engine, "The printer is on the second floor")
    payload = {"id": saved["judgment_id"]}
    typed = engine.read_as(MemoryReadResult, "memory.read", payload, OWNER, OWNER_GRANT)
    assert typed.record.summary == "The printer is on the second floor"
    assert typed.to_wire() == engine.dispatch("memory.read", payload, OWNER, OWNER_GRANT)
    with pytest.raises(TypeError):  # not the action's model
        engine.read_as(SearchResult, "memory.read", payload, OWNER, OWNER_GRANT)
    with pytest.raises(EngineError):  # a mutation has a receipt, not a result
        engine.read_as(
            SearchResult, "memory.save", {"kind": "fact", "summary": "x"}, OWNER, OWNER_GRANT
        )


def test_observation_list_and_read_wire_is_the_old_dict(engine: Engine) -> None:
    said = engine.dispatch(
        "observation.record",
        {"source": "telegram", "external_id": "m1", "author": "owner", "text": "hello"},
        OWNER,
        OWNER_GRANT,
    )
    conn = engine.store.new_connection()
    try:
        conn.execute(
            "INSERT INTO observations (source, external_id, author, text, received_at) "
            "VALUES ('slack:T1', 'x1', 'dana', 'the deck is late', "
            "'2026-11-30T09:00:00.000000Z')"
        )
        conn.execute(
            "INSERT INTO observation_facets (observation_id, channel, scope, metadata) "
            "VALUES (last_insert_rowid(), 'C1', 'global', '{\"thread\": \"t9\", \"n\": 2}')"
        )
    finally:
        conn.close()
    listed = engine.dispatch("observation.list", {}, OWNER, OWNER_GRANT)
    item = next(o for o in listed["observations"] if o["source"] == "slack:T1")
    own = next(o for o in listed["observations"] if o["id"] == said["observation_id"])
    keys = ["id", "source", "external_id", "author", "text", "received_at", "purged_at"]
    assert list(item) == [*keys, "purged", "channel", "scope", "metadata"]
    assert item["metadata"] == {"thread": "t9", "n": 2} and own["scope"] is None
    read = engine.dispatch("observation.read", {"id": item["id"]}, OWNER, OWNER_GRANT)
    assert read == {"observation": item}
    assert json.dumps(ObservationListResult.model_validate(listed).to_wire()) == json.dumps(listed)
    assert json.dumps(ObservationReadResult.model_validate(read).to_wire()) == json.dumps(read)


def test_guidance_changes_wire_is_the_old_dict(engine: Engine) -> None:
    save(engine, "Reply in English", "preference")
    gone = save(engine, "Never deploy on Fridays", "constraint")
    kept = save(engine, "Use metric units", "preference", applies_when="giving measurements")
    engine.dispatch(
        "memory.retire", {"id": gone["judgment_id"], "reason": "daily"}, OWNER, OWNER_GRANT
    )
    engine.dispatch(
        "memory.save",
        {
            "kind": "preference",
            "summary": "Use metric units, with imperial in brackets",
            "applies_when": "giving measurements",
            "replaces": [kept["judgment_id"]],
        },
        OWNER,
        OWNER_GRANT,
    )
    got = engine.dispatch("guidance.changes", {"since": kept["event_id"]}, OWNER, OWNER_GRANT)
    assert list(got) == ["since", "until", "total", "offset", "changes", "more"]
    shapes = {c["change"]: list(c) for c in got["changes"]}
    assert shapes["retired"] == ["change", "id", "kind", "status", "summary"]
    item = ["change", "id", "kind", "topic", "summary", "applies_when", "steps"]
    assert shapes["revised"] == [*item, "replaces"]
    assert json.dumps(GuidanceChangesResult.model_validate(got).to_wire()) == json.dumps(got)
    added = engine.dispatch("guidance.changes", {"since": 0}, OWNER, OWNER_GRANT)
    assert {c["change"] for c in added["changes"]} >= {"added"}
    assert next(list(c) for c in added["changes"] if c["change"] == "added") == item
    assert json.dumps(GuidanceChangesResult.model_validate(added).to_wire()) == json.dumps(added)


def test_observation_counts_wire_is_the_old_dict(engine: Engine) -> None:
    empty = engine.dispatch("observation.counts", {}, OWNER, OWNER_GRANT)
    assert empty == {"counts": [], "newest_id": None}
    conn = engine.store.new_connection()
    try:
        for external_id in ("a", "b"):
            cur = conn.execute(
                "INSERT INTO observations (source, external_id, author, text, received_at) "
                "VALUES ('slack:T1', ?, 'dana', 'hi', '2026-11-30T09:00:00.000000Z')",
                (external_id,),
            )
            conn.execute(
                "INSERT INTO observation_facets (observation_id, channel, scope, metadata) "
                "VALUES (?, 'C1', 'global', '{}')",
                (cur.lastrowid,),
            )
    finally:
        conn.close()
    got = engine.dispatch("observation.counts", {}, OWNER, OWNER_GRANT)
    expected = {
        "counts": [{"source": "slack:T1", "channel": "C1", "count": 2, "last_id": 2}],
        "newest_id": 2,
    }
    _same_wire(got, expected)
    for wire in (empty, got):
        assert json.dumps(ObservationCountsResult.model_validate(wire).to_wire()) == json.dumps(
            wire
        )


def test_person_list_wire_is_the_old_dict(engine: Engine) -> None:
    engine.dispatch(
        "memory.save",
        {"kind": "commitment", "summary": "Send Dana the deck", "commitment": {"owed_to": "Dana"}},
        OWNER,
        OWNER_GRANT,
    )
    got = engine.dispatch("person.list", {}, OWNER, OWNER_GRANT)
    assert list(got) == ["people"] and got["people"]
    dana = next(p for p in got["people"] if p["name"] == "Dana")
    assert list(dana) == [
        "name",
        "aliases",
        "joined_by_owner",
        "memories",
        "commitments",
        "messages",
        "meetings",
    ]
    assert dana["commitments"] == 1 and dana["joined_by_owner"] is False
    assert json.dumps(PersonListResult.model_validate(got).to_wire()) == json.dumps(got)
    about = engine.dispatch("person.about", {"name": "Dana"}, OWNER, OWNER_GRANT)
    (listed,) = engine.dispatch("commitment.list", {}, OWNER, OWNER_GRANT)["commitments"]
    assert about["commitments"] == {"owed_by": [], "owed_to": [listed]}
    assert json.dumps(about["commitments"]["owed_to"][0]) == json.dumps(listed)


def _observe(engine: Engine, external_id: str, text: str) -> int:
    receipt = engine.dispatch(
        "observation.record",
        {"source": "telegram", "external_id": external_id, "author": "owner", "text": text},
        OWNER,
        OWNER_GRANT,
    )
    return int(receipt["observation_id"])


def test_quotes_wire_is_the_old_dict(engine: Engine) -> None:
    quoted = _observe(engine, "q1", "remember: The boat key is in the blue jar")
    _observe(engine, "q2", "lunch at noon")  # the control: quotes nothing
    kept = save(engine, "The boat key is in the blue jar")
    got = engine.dispatch("memory.quotes", {"id": kept["judgment_id"]}, OWNER, OWNER_GRANT)
    (row,) = engine.store.conn.execute(
        "SELECT received_at FROM observations WHERE id = ?", (quoted,)
    ).fetchall()
    expected = {
        "id": kept["judgment_id"],
        "observations": [
            {
                "id": quoted,
                "source": "telegram",
                "external_id": "q1",
                "author": "owner",
                "text": "remember: The boat key is in the blue jar",
                "received_at": str(row[0]),
                "purged_at": None,
                "purged": False,
                "quotes": [kept["judgment_id"]],
                "why": ["text"],
            }
        ],
    }
    _same_wire(got, expected)
    assert json.dumps(QuotesResult.model_validate(got).to_wire()) == json.dumps(got)


def test_owner_settings_wire_is_the_old_dict(engine: Engine) -> None:
    brief = {
        "enabled": False,
        "days": ["mon", "tue", "wed", "thu", "fri"],
        "time": "08:30",
        "covers": ["observations", "commitments", "proposals"],
    }
    _same_wire(
        engine.dispatch("owner.settings", {}, AGENT, agent_grant()),
        {"timezone": None, "brief": brief},
    )
    # A stored brief that names only some fields still shows every field.
    receipt = engine.dispatch("owner.set_brief", {"enabled": True}, AGENT, agent_grant())
    _same_wire(receipt["settings"], {"timezone": None, "brief": {**brief, "enabled": True}})
    proposal = engine.dispatch(
        "owner.set_timezone",
        {"timezone": "Pacific/Kiritimati", "reason": "Bob's mail says you moved"},
        TAINTED,
        agent_grant(),
    )
    got = engine.dispatch("owner.settings", {}, OWNER, OWNER_GRANT)
    (change,) = got["pending_changes"]
    (created_at,) = engine.store.conn.execute(
        "SELECT created_at FROM change_proposals WHERE id = ?", (proposal["change_id"],)
    ).fetchone()
    expected = {
        "timezone": None,
        "brief": {**brief, "enabled": True},
        "pending_changes": [
            {
                "id": proposal["change_id"],
                "action": "owner.set_timezone",
                "state": "pending",
                "judgment_id": None,
                "setting": "timezone",
                "input": {"reason": "Bob's mail says you moved", "timezone": "Pacific/Kiritimati"},
                "proposed_by": change["proposed_by"],
                "created_at": str(created_at),
                "description": "set your timezone to Pacific/Kiritimati: Bob's mail says you moved",
            }
        ],
    }
    _same_wire(got, expected)
    assert change["proposed_by"]["name"] == AGENT.actor_name
    assert json.dumps(OwnerSettingsResult.model_validate(got).to_wire()) == json.dumps(got)
    # An agent's read of the same store: no pending changes key at all.
    assert list(engine.dispatch("owner.settings", {}, AGENT, agent_grant())) == [
        "timezone",
        "brief",
    ]


def test_memory_read_pending_change_and_evidence_wire_keys(engine: Engine) -> None:
    cited = _observe(engine, "e1", "we ship on Thursday")
    rule = save(engine, "We ship on Thursday", "decision", evidence=[f"obs:{cited}"])
    proposal = engine.dispatch(
        "memory.retire", {"id": rule["judgment_id"], "reason": "moved"}, AGENT, agent_grant()
    )
    owners = engine.dispatch("memory.read", {"id": rule["judgment_id"]}, OWNER, OWNER_GRANT)
    change = owners["record"]["pending_change"]
    assert list(change) == [
        "id",
        "action",
        "state",
        "judgment_id",
        "setting",
        "input",
        "proposed_by",
        "created_at",
        "description",
    ]
    assert (change["id"], change["setting"]) == (proposal["change_id"], None)
    agents = engine.dispatch("memory.read", {"id": rule["judgment_id"]}, AGENT, agent_grant())
    assert agents["record"]["pending_change"] == {
        "id": proposal["change_id"],
        "action": "memory.retire",
        "state": "pending",
    }
    (item,) = owners["record"]["evidence"]
    assert list(item) == ["ref", "visible", "source", "channel", "author", "at", "excerpt"]
    assert (item["ref"], item["excerpt"], item["channel"]) == (
        f"obs:{cited}",
        "we ship on Thursday",
        None,
    )
