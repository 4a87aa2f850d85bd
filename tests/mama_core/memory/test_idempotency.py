"""A command id is an idempotency key: the same command returns the stored receipt
and writes nothing; the same id with another payload, action or caller is a conflict."""

from __future__ import annotations

import pytest

from mama_core.memory import CommandConflictError, Engine, InvalidInputError
from tests.mama_core.memory.helpers import (
    AGENT,
    OWNER,
    OWNER_GRANT,
    agent_grant,
    event_count,
    search_ids,
)

SAVE = {"kind": "decision", "summary": "Ship on Fridays is forbidden", "command_id": "cmd-1"}


def test_same_command_replays_the_receipt_and_writes_nothing(engine: Engine) -> None:
    first = engine.dispatch("memory.save", SAVE, OWNER, OWNER_GRANT)
    events = event_count(engine)
    again = engine.dispatch("memory.save", dict(SAVE), OWNER, OWNER_GRANT)
    assert again["replayed"] is True
    assert first["replayed"] is False
    assert {k: v for k, v in again.items() if k != "replayed"} == {
        k: v for k, v in first.items() if k != "replayed"
    }
    assert event_count(engine) == events
    assert search_ids(engine, "Fridays") == [first["judgment_id"]]


def test_key_order_and_defaults_do_not_change_the_payload_hash(engine: Engine) -> None:
    first = engine.dispatch("memory.save", SAVE, OWNER, OWNER_GRANT)
    reordered = {"summary": SAVE["summary"], "command_id": "cmd-1", "kind": "decision", "topic": ""}
    assert engine.dispatch("memory.save", reordered, OWNER, OWNER_GRANT) == {
        **first,
        "replayed": True,
    }


def test_same_id_other_payload_is_a_conflict(engine: Engine) -> None:
    engine.dispatch("memory.save", SAVE, OWNER, OWNER_GRANT)
    events = event_count(engine)
    with pytest.raises(CommandConflictError) as info:
        engine.dispatch(
            "memory.save", {**SAVE, "summary": "Ship on Fridays is fine"}, OWNER, OWNER_GRANT
        )
    assert info.value.details == {"command_id": "cmd-1"}
    assert event_count(engine) == events
    assert search_ids(engine, "fine") == []
    assert search_ids(engine, "forbidden") != []  # positive control


def test_same_id_other_action_or_caller_is_a_conflict(engine: Engine) -> None:
    saved = engine.dispatch("memory.save", SAVE, OWNER, OWNER_GRANT)
    with pytest.raises(CommandConflictError):
        engine.dispatch(
            "memory.retire",
            {"id": saved["judgment_id"], "reason": "x", "command_id": "cmd-1"},
            OWNER,
            OWNER_GRANT,
        )
    with pytest.raises(CommandConflictError):
        engine.dispatch("memory.save", SAVE, AGENT, agent_grant())


def test_failed_command_leaves_no_receipt_and_can_be_retried(engine: Engine) -> None:
    bad = {"id": 999, "reason": "gone", "command_id": "cmd-retire"}
    events = event_count(engine)
    with pytest.raises(Exception) as info:
        engine.dispatch("memory.retire", bad, OWNER, OWNER_GRANT)
    assert getattr(info.value, "code", None) == "not_found"
    assert event_count(engine) == events
    saved = engine.dispatch("memory.save", SAVE, OWNER, OWNER_GRANT)
    retried = engine.dispatch(
        "memory.retire", {**bad, "id": saved["judgment_id"]}, OWNER, OWNER_GRANT
    )
    assert retried["status"] == "stale"
    assert retried["replayed"] is False


def test_command_id_shape_is_checked(engine: Engine) -> None:
    with pytest.raises(InvalidInputError) as info:
        engine.dispatch("memory.save", {**SAVE, "command_id": "has space"}, OWNER, OWNER_GRANT)
    assert info.value.details["fields"] == ["command_id"]


def test_generated_command_ids_are_distinct(engine: Engine) -> None:
    # even_if_duplicate: the same words again are otherwise answered with the first record.
    payload = {"kind": "fact", "summary": "Twice saved on purpose", "even_if_duplicate": True}
    first = engine.dispatch("memory.save", payload, OWNER, OWNER_GRANT)
    second = engine.dispatch("memory.save", payload, OWNER, OWNER_GRANT)
    assert first["command_id"] != second["command_id"]
    assert first["judgment_id"] != second["judgment_id"]
