"""Tombstones: a retired text the owner forbade cannot be saved again in an
overlapping scope, by exact text or near-duplicate wording, until lifted."""

from __future__ import annotations

from uuid import uuid4

import pytest

from mama_core.embeddings import Embedder, GgufEmbedder
from mama_core.memory import (
    Engine,
    EngineConfig,
    InvalidTransitionError,
    NotGrantedError,
    SessionFacts,
    TombstonedError,
)
from mama_core.memory.records import load_visible
from mama_core.memory.tombstones import create_tombstone
from mama_core.memory.writer import Applied, Command, Tx
from mama_core.store import Store
from tests.mama_core.memory.helpers import (
    AGENT,
    OWNER,
    OWNER_GRANT,
    agent_grant,
    event_count,
    save,
)

RULE = "Use four spaces for indentation"
WHEN = "editing Python files"


def _tombstoned_rule(engine: Engine, scopes: list[str] | None = None) -> dict:
    jid = save(engine, RULE, "preference", applies_when=WHEN, scopes=scopes or ["global"])[
        "judgment_id"
    ]
    return engine.dispatch(
        "memory.retire",
        {"id": jid, "reason": "we switched to tabs", "forbid_resave": True},
        OWNER,
        OWNER_GRANT,
    )


def test_exact_text_after_normalisation_is_refused(engine: Engine) -> None:
    receipt = _tombstoned_rule(engine)
    events = event_count(engine)
    with pytest.raises(TombstonedError) as info:
        save(engine, "  use FOUR spaces, for indentation!! ", "preference", applies_when="anything")
    assert info.value.details["tombstone_id"] == receipt["tombstone_id"]
    assert info.value.details["reason"] == "we switched to tabs"
    assert "we switched to tabs" in info.value.message
    assert event_count(engine) == events
    # Positive control: an unrelated preference in the same scope saves.
    assert (
        save(engine, "Use tabs for indentation", "preference", applies_when=WHEN)["status"]
        == "active"
    )


def test_near_duplicate_wording_is_refused(engine: Engine) -> None:
    _tombstoned_rule(engine)
    with pytest.raises(TombstonedError) as info:
        save(engine, "Indent with four spaces", "preference", applies_when=WHEN)
    assert info.value.details["similarity"] >= 0.92
    with pytest.raises(TombstonedError):
        save(
            engine,
            "Indentation should use four spaces",
            "preference",
            applies_when=WHEN,
            session=AGENT,
            grant=agent_grant(),
        )


def test_a_non_overlapping_scope_is_allowed(engine: Engine) -> None:
    _tombstoned_rule(engine, ["project:alpha"])
    assert (
        save(engine, RULE, "preference", applies_when=WHEN, scopes=["project:beta"])["status"]
        == "active"
    )
    with pytest.raises(TombstonedError):
        save(
            engine, RULE, "preference", applies_when=WHEN, scopes=["project:beta", "project:alpha"]
        )


def test_lifting_reallows_and_is_owner_only(engine: Engine) -> None:
    receipt = _tombstoned_rule(engine)
    with pytest.raises(NotGrantedError):
        engine.dispatch(
            "tombstone.lift",
            {"tombstone_id": receipt["tombstone_id"], "reason": "x"},
            AGENT,
            agent_grant(),
        )
    engine.dispatch(
        "tombstone.lift",
        {"tombstone_id": receipt["tombstone_id"], "reason": "back to spaces"},
        OWNER,
        OWNER_GRANT,
    )
    assert save(engine, RULE, "preference", applies_when=WHEN)["status"] == "active"
    with pytest.raises(InvalidTransitionError):
        engine.dispatch(
            "tombstone.lift",
            {"tombstone_id": receipt["tombstone_id"], "reason": "twice"},
            OWNER,
            OWNER_GRANT,
        )


def test_reject_with_forbid_resave_and_the_tombstone_verb(engine: Engine) -> None:
    proposal = save(
        engine,
        "Always squash merge",
        "preference",
        applies_when="merging",
        session=AGENT,
        grant=agent_grant(),
    )
    rejected = engine.dispatch(
        "review.reject",
        {"id": proposal["judgment_id"], "reason": "we keep history", "forbid_resave": True},
        OWNER,
        OWNER_GRANT,
    )
    assert rejected["tombstone_id"] >= 1
    with pytest.raises(TombstonedError):
        save(
            engine,
            "always squash merge",
            "preference",
            applies_when="merging",
            session=AGENT,
            grant=agent_grant(),
        )

    fact = save(engine, "The wifi password rotates monthly")["judgment_id"]
    engine.dispatch(
        "memory.tombstone", {"id": fact, "reason": "do not keep this"}, OWNER, OWNER_GRANT
    )
    with pytest.raises(TombstonedError):
        save(engine, "The wifi password rotates monthly.")
    assert save(engine, "The office wifi is fast")["status"] == "active"


def test_the_threshold_comes_from_the_config(store: Store, embedder: Embedder) -> None:
    with Engine(store, embedder, EngineConfig(tombstone_threshold=0.999)) as strict:
        _tombstoned_rule(strict)
        # Near-duplicate wording passes a stricter threshold; the exact text still does not.
        assert (
            save(strict, "Indent with four spaces", "preference", applies_when=WHEN)["status"]
            == "active"
        )
        with pytest.raises(TombstonedError):
            save(strict, RULE, "preference", applies_when=WHEN)


def test_near_duplicates_stay_refused_after_the_embedding_model_changes(
    store: Store, embedder: Embedder
) -> None:
    """A tombstone keeps the vector of the model it was made under; after an update
    changes the model, the retired judgment's caught-up vector stands in for it."""
    assert isinstance(embedder, GgufEmbedder)
    with Engine(store, embedder) as before:
        _tombstoned_rule(before)
    updated = GgufEmbedder(embedder.model_path, model_id="the-next-default")
    try:
        with Engine(store, updated) as after:
            assert after.catch_up_vectors().wait_idle(timeout=300)
            with pytest.raises(TombstonedError) as info:
                save(after, "Indent with four spaces", "preference", applies_when=WHEN)
            assert info.value.details["similarity"] >= 0.92  # by meaning, not by text
            # Positive control: an unrelated preference in the same scope saves.
            assert (
                save(after, "Use tabs for indentation", "preference", applies_when=WHEN)["status"]
                == "active"
            )
    finally:
        updated.close()


def _tombstone_made_by(engine: Engine, session: SessionFacts, judgment_id: int) -> int:
    """A tombstone written by the one writer with ``session`` as the event's actor: how
    a store holds one an agent made before tombstones became the owner's alone."""

    def apply(tx: Tx) -> Applied:
        target = load_visible(tx.conn, judgment_id, tx.grant)
        made = create_tombstone(tx, target, "the agent thought so", engine.embedder.model_id)
        return Applied(target.id, {"tombstone_id": made}, {"tombstone_id": made})

    command = Command("memory.tombstone", uuid4().hex, "0" * 64, session, agent_grant(), apply)
    receipt = engine._writer.submit(command).result().receipt
    assert receipt.tombstone_id is not None
    return receipt.tombstone_id


def test_the_refusal_names_who_made_the_tombstone(engine: Engine) -> None:
    owners = _tombstoned_rule(engine)
    with pytest.raises(TombstonedError) as info:
        save(engine, RULE, "preference", applies_when=WHEN)
    assert "something the owner retired" in info.value.message
    assert f"mama tombstones lift {owners['tombstone_id']}" in info.value.message
    assert info.value.details["created_by"] == {"kind": "owner", "name": "owner"}

    fact = save(engine, "Builds run on the blue runner", session=AGENT, grant=agent_grant())
    agents = _tombstone_made_by(engine, AGENT, fact["judgment_id"])
    with pytest.raises(TombstonedError) as info:
        save(engine, "builds run on the blue runner")
    assert info.value.details["tombstone_id"] == agents
    assert info.value.details["created_by"] == {"kind": "agent", "name": "claude-code"}
    assert "the agent claude-code tombstoned" in info.value.message
    assert "the owner" not in info.value.message.split("forbade")[0]


def test_the_owner_lists_tombstones_with_what_they_block(engine: Engine) -> None:
    first = _tombstoned_rule(engine, ["project:alpha"])
    fact = save(engine, "The door code changes weekly", scopes=["project:beta"])["judgment_id"]
    second = engine.dispatch(
        "memory.tombstone", {"id": fact, "reason": "stop keeping it"}, OWNER, OWNER_GRANT
    )["tombstone_id"]
    engine.dispatch(
        "tombstone.lift",
        {"tombstone_id": first["tombstone_id"], "reason": "fine"},
        OWNER,
        OWNER_GRANT,
    )
    engine.dispatch("memory.purge", {"id": fact, "reason": "erase it"}, OWNER, OWNER_GRANT)

    listed = engine.dispatch("tombstone.list", {}, OWNER, OWNER_GRANT)["tombstones"]
    assert [t["id"] for t in listed] == [second, first["tombstone_id"]]
    erased, lifted = listed
    assert lifted["text"] == RULE and lifted["scopes"] == ["project:alpha"]
    assert lifted["reason"] == "we switched to tabs" and lifted["made_by_action"] == "memory.retire"
    assert lifted["created_by"] == {"kind": "owner", "name": "owner", "turn": "cli"}
    assert lifted["lifted"] and lifted["lift_reason"] == "fine"
    assert lifted["lifted_by"]["kind"] == "owner"
    assert erased["text"] is None and erased["text_erased"] and not erased["lifted"]
    assert erased["scopes"] == ["project:beta"] and erased["status"] == "purged"

    active = engine.dispatch("tombstone.list", {"include_lifted": False}, OWNER, OWNER_GRANT)
    assert [t["id"] for t in active["tombstones"]] == [second]
    by_record = engine.dispatch("tombstone.list", {"judgment_id": fact}, OWNER, OWNER_GRANT)
    assert [t["id"] for t in by_record["tombstones"]] == [second]
    with pytest.raises(NotGrantedError):
        engine.dispatch("tombstone.list", {}, AGENT, agent_grant())
