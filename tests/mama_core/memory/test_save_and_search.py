"""memory.save lands a judgment with its receipt, event and provenance;
plain memory.search finds it by words, and nothing else."""

from __future__ import annotations

import json

import pytest

from mama_core.memory import Engine, InvalidInputError
from tests.mama_core.memory.helpers import AGENT, OWNER, OWNER_GRANT, agent_grant


def test_owner_save_is_active_and_found(engine: Engine) -> None:
    receipt = engine.dispatch(
        "memory.save",
        {"kind": "decision", "topic": "database", "summary": "We store memory in SQLCipher"},
        OWNER,
        OWNER_GRANT,
    )
    assert receipt["action"] == "memory.save"
    assert receipt["status"] == "active"
    assert receipt["replayed"] is False
    assert receipt["touched"] == [receipt["judgment_id"]]
    assert isinstance(receipt["event_id"], int)

    found = engine.dispatch("memory.search", {"query": "sqlcipher"}, OWNER, OWNER_GRANT)
    assert [r["id"] for r in found["results"]] == [receipt["judgment_id"]]
    result = found["results"][0]
    assert result["involvement"] == "owner_stated"
    assert result["scopes"] == ["global"]

    # Positive control above; a word that is in no record finds nothing.
    assert (
        engine.dispatch("memory.search", {"query": "postgres"}, OWNER, OWNER_GRANT)["results"] == []
    )


def test_fts_syntax_in_queries_is_only_words(engine: Engine) -> None:
    engine.dispatch(
        "memory.save",
        {"kind": "fact", "summary": 'The "NEAR" operator AND friends are just words here'},
        OWNER,
        OWNER_GRANT,
    )
    for query in ['"NEAR', "AND OR NOT", "summary:words", "near(", "*", "^x", '"""', "a-b"]:
        engine.dispatch("memory.search", {"query": query}, OWNER, OWNER_GRANT)
    hit = engine.dispatch("memory.search", {"query": 'NEAR"'}, OWNER, OWNER_GRANT)
    assert len(hit["results"]) == 1


def test_caller_cannot_send_provenance_or_status(engine: Engine) -> None:
    for extra in ("provenance", "involvement", "status"):
        with pytest.raises(InvalidInputError) as info:
            engine.dispatch(
                "memory.save",
                {"kind": "fact", "summary": "The sky is blue", extra: "owner_stated"},
                AGENT,
                agent_grant("global"),
            )
        assert info.value.details["fields"] == [extra]
    ok = engine.dispatch(
        "memory.save", {"kind": "fact", "summary": "The sky is blue"}, AGENT, agent_grant()
    )
    assert ok["status"] == "active"


def test_agent_provenance_is_stamped_from_session(engine: Engine) -> None:
    receipt = engine.dispatch(
        "memory.save",
        {"kind": "fact", "summary": "The build uses uv"},
        AGENT,
        agent_grant("global"),
    )
    row = engine.store.conn.execute(
        "SELECT provenance, involvement FROM judgments WHERE id = ?", (receipt["judgment_id"],)
    ).fetchone()
    provenance = json.loads(row[0])
    assert provenance["actor_kind"] == "agent"
    assert provenance["actor_name"] == "claude-code"
    assert provenance["actor_version"] == "2.1"
    assert provenance["backend"] == "claude"
    assert provenance["message_ref"] == "tg:42"
    assert provenance["turn"] == "owner_message"
    assert row[1] == "agent_inferred"


def test_listing_without_words_does_not_load_the_vector_cache(engine: Engine) -> None:
    """The review window lists by empty query on open; loading every vector for that
    cost ~250 ms at 10,000 memories (bench.startup) and bought nothing."""
    saved = engine.dispatch(
        "memory.save", {"kind": "fact", "summary": "The printer is on floor 3"}, OWNER, OWNER_GRANT
    )
    listed = engine.dispatch("memory.search", {"query": "  "}, OWNER, OWNER_GRANT)
    assert [r["id"] for r in listed["results"]] == [saved["judgment_id"]]
    assert engine.vector_cache is None
    # Control: a search with words ranks with vectors, so the cache is loaded then.
    found = engine.dispatch("memory.search", {"query": "printer"}, OWNER, OWNER_GRANT)
    assert [r["id"] for r in found["results"]] == [saved["judgment_id"]]
    assert engine.vector_cache is not None and len(engine.vector_cache) == 1
