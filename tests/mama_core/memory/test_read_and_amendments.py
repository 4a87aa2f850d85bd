"""memory.read shows a record with provenance, labelled history and text-free
events; outcomes and links are amendments (events and edges), never new beliefs."""

from __future__ import annotations

import json

import pytest

from mama_core.memory import Engine, NotFoundError
from tests.mama_core.memory.helpers import (
    AGENT,
    OWNER,
    OWNER_GRANT,
    agent_grant,
    event_count,
    save,
    search_ids,
)


def test_read_shows_history_labelled_and_events_without_text(engine: Engine) -> None:
    v1 = save(engine, "Lunch is at noon marmoset")["judgment_id"]
    v2 = save(engine, "Lunch is at one", replaces=[v1])["judgment_id"]
    v3 = save(engine, "Lunch is at half past one", replaces=[v2])["judgment_id"]
    read = engine.dispatch("memory.read", {"id": v3}, OWNER, OWNER_GRANT)
    assert read["record"]["summary"] == "Lunch is at half past one"
    assert read["record"]["provenance"]["actor_kind"] == "owner"
    assert [(h["id"], h["relation"], h["replaced_by"]) for h in read["history"]] == [
        (v2, "replaced", v3),
        (v1, "replaced", v2),
    ]
    assert all(h["status"] == "superseded" for h in read["history"])
    assert [e["action"] for e in read["events"]] == ["memory.save"]
    old_events = engine.dispatch("memory.read", {"id": v1}, OWNER, OWNER_GRANT)["events"]
    assert [e["judgment_id"] for e in old_events] == [v1, v2]  # created, then superseded
    every_event = json.dumps(read["events"] + old_events)
    assert "marmoset" not in every_event and "Lunch" not in every_event
    assert "marmoset" in json.dumps(
        engine.dispatch("memory.read", {"id": v1}, OWNER, OWNER_GRANT)["record"]
    )  # positive control: the words are in the record itself


def test_history_stays_inside_the_callers_scopes(engine: Engine) -> None:
    private = save(engine, "Salary band private", scopes=["user:ann"])["judgment_id"]
    public = save(engine, "Salary band public", scopes=["global"], replaces=[private])[
        "judgment_id"
    ]
    agent_read = engine.dispatch("memory.read", {"id": public}, AGENT, agent_grant("global"))
    assert agent_read["history"] == []
    owner_read = engine.dispatch("memory.read", {"id": public}, OWNER, OWNER_GRANT)
    assert [h["id"] for h in owner_read["history"]] == [private]
    private_read = engine.dispatch("memory.read", {"id": private}, OWNER, OWNER_GRANT)
    assert private_read["record"]["superseded_by"] == public


def test_outcome_is_an_event_not_a_new_belief(engine: Engine) -> None:
    decision = save(engine, "Adopt SQLCipher for storage", "decision")["judgment_id"]
    judgments_before = engine.store.conn.execute("SELECT count(*) FROM judgments").fetchone()[0]
    events = event_count(engine)
    receipt = engine.dispatch(
        "memory.update_outcome",
        {"id": decision, "outcome": "Worked well; quokka benchmarks fine", "reason": "review"},
        OWNER,
        OWNER_GRANT,
    )
    assert receipt["status"] == "active"
    assert event_count(engine) == events + 1
    assert engine.store.conn.execute("SELECT count(*) FROM judgments").fetchone()[0] == (
        judgments_before
    )
    assert search_ids(engine, "quokka") == []
    assert search_ids(engine, "SQLCipher") == [decision]
    read = engine.dispatch("memory.read", {"id": decision}, OWNER, OWNER_GRANT)
    assert read["record"]["outcome"] == "Worked well; quokka benchmarks fine"
    last = read["events"][-1]
    assert last["action"] == "memory.update_outcome"
    assert "quokka" not in json.dumps(last)
    assert len(last["payload"]["outcome_hash"]) == 64  # keyed (HMAC), not a bare sha256


def test_link_relates_visible_records_only(engine: Engine) -> None:
    a = save(engine, "Cause record", session=AGENT, grant=agent_grant())["judgment_id"]
    b = save(engine, "Effect record", session=AGENT, grant=agent_grant())["judgment_id"]
    hidden = save(engine, "Hidden record", scopes=["project:x"])["judgment_id"]
    receipt = engine.dispatch(
        "memory.link",
        {"src": b, "dst": a, "kind": "caused_by", "reason": "obvious"},
        AGENT,
        agent_grant(),
    )
    assert receipt["touched"] == sorted([a, b])
    row = engine.store.conn.execute(
        "SELECT src_id, dst_id, kind, reason, event_id FROM edges WHERE id = ?",
        (receipt["edge_id"],),
    ).fetchone()
    assert row == (b, a, "caused_by", "obvious", receipt["event_id"])
    with pytest.raises(NotFoundError):
        engine.dispatch(
            "memory.link", {"src": b, "dst": hidden, "kind": "relates_to"}, AGENT, agent_grant()
        )
    assert set(search_ids(engine, "record")) == {a, b, hidden}


def test_observations_are_recorded_once(engine: Engine) -> None:
    payload = {"source": "slack:T1", "external_id": "C1/1700", "author": "bob", "text": "hi"}
    receipt = engine.dispatch("observation.record", payload, OWNER, OWNER_GRANT)
    row = engine.store.conn.execute(
        "SELECT source, external_id, author, text FROM observations WHERE id = ?",
        (receipt["observation_id"],),
    ).fetchone()
    assert row == ("slack:T1", "C1/1700", "bob", "hi")
    with pytest.raises(Exception) as info:
        engine.dispatch("observation.record", payload, OWNER, OWNER_GRANT)
    assert getattr(info.value, "code", "") == "command_conflict"
