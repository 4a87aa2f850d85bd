"""The catalog and dispatcher: schemas, refusals in order (unknown action, grant,
input), typed errors, async dispatch off the loop, change-sets after commits and
many threads through the one writer."""

from __future__ import annotations

import asyncio
import threading

import pytest

from mama_core import errors as engine_errors
from mama_core.memory import (
    CATALOG,
    Engine,
    Grant,
    InvalidInputError,
    NotGrantedError,
    UnknownActionError,
    verify_store,
)
from mama_core.memory.catalog import AGENT_ACTIONS, OWNER_ONLY_ACTIONS
from mama_core.model import ChangeSet
from tests.mama_core.memory.helpers import (
    AGENT,
    OWNER,
    OWNER_GRANT,
    agent_grant,
    event_count,
    save,
    search_ids,
)


def test_every_action_has_a_strict_described_schema() -> None:
    assert set(CATALOG.actions) >= AGENT_ACTIONS | OWNER_ONLY_ACTIONS
    for name, spec in CATALOG.actions.items():
        schema = CATALOG.json_schema(name)
        assert schema["additionalProperties"] is False, name
        assert spec.description
        assert ("command_id" in schema["properties"]) == spec.mutates, name
    save_schema = CATALOG.json_schema("memory.save")
    for field in ("kind", "summary", "applies_when", "steps", "scopes", "replaces"):
        assert save_schema["properties"][field]["description"]
    assert "provenance" not in save_schema["properties"]
    owner_only = {
        "review.approve",
        "review.reject",
        "memory.purge",
        "memory.tombstone",
        "memory.restore",
        "person.join",
        "person.split",
    }
    owner_reads = {"memory.quotes", "tombstone.list"}
    assert owner_only | {"tombstone.lift"} | owner_reads == OWNER_ONLY_ACTIONS
    # Observations are read within the caller's scopes (connector items carry one).
    assert {"observation.list", "observation.read"} <= AGENT_ACTIONS
    # What the memory holds about a person is read within the caller's scopes too.
    assert {"person.about", "person.list"} <= AGENT_ACTIONS


def test_a_schema_is_made_once_but_each_caller_gets_its_own_copy() -> None:
    """The catalog keeps each schema it made (every turn asks for all of them); a caller
    that changes its copy (a backend hiding the host's own fields) changes no other's."""
    first = CATALOG.json_schema("memory.save")
    assert first == CATALOG.actions["memory.save"].input_model.model_json_schema()
    del first["properties"]["command_id"]
    first["required"].append("changed")
    again = CATALOG.json_schema("memory.save")
    assert "command_id" in again["properties"] and "changed" not in again["required"]
    assert again == CATALOG.actions["memory.save"].input_model.model_json_schema()


def test_error_codes_and_exit_codes_are_distinct() -> None:
    classes = [
        engine_errors.UnknownActionError,
        engine_errors.InvalidInputError,
        engine_errors.NotGrantedError,
        engine_errors.ScopeDeniedError,
        engine_errors.SecretRefusedError,
        engine_errors.OwnerTurnRequiredError,
        engine_errors.TombstonedError,
        engine_errors.CommandConflictError,
        engine_errors.NotFoundError,
        engine_errors.InvalidTransitionError,
        engine_errors.AlreadyRejectedError,
    ]
    codes = [c.code for c in classes]
    assert codes == [
        "unknown_action",
        "invalid_input",
        "not_granted",
        "scope_denied",
        "secret_refused",
        "owner_turn_required",
        "tombstoned",
        "command_conflict",
        "not_found",
        "invalid_transition",
        "already_rejected",
    ]
    exits = [c.exit_code for c in classes]
    assert len(set(exits)) == len(exits)
    assert all(30 <= e <= 49 for e in exits)


def test_unknown_action_and_grants(engine: Engine) -> None:
    with pytest.raises(UnknownActionError):
        engine.dispatch("memory.delete", {"id": 1}, OWNER, OWNER_GRANT)
    with pytest.raises(NotGrantedError):
        Grant.agent(["global"], actions=["memory.save", "memory.purge"])
    read_only = Grant.agent(["global"], actions=["memory.search"])
    with pytest.raises(NotGrantedError):
        engine.dispatch("memory.save", {"kind": "fact", "summary": "x"}, AGENT, read_only)
    assert engine.dispatch("memory.search", {"query": "x"}, AGENT, read_only)["results"] == []
    jid = save(engine, "Purge target")["judgment_id"]
    with pytest.raises(NotGrantedError):
        engine.dispatch("memory.purge", {"id": jid, "reason": "x"}, AGENT, agent_grant())
    with pytest.raises(NotGrantedError):  # an owner-only verb needs the owner as actor
        engine.dispatch("memory.purge", {"id": jid, "reason": "x"}, AGENT, OWNER_GRANT)


def test_invalid_input_names_field_paths_without_values(engine: Engine) -> None:
    with pytest.raises(InvalidInputError) as info:
        engine.dispatch(
            "memory.save",
            {
                "kind": "workflow",
                "summary": "Deploy",
                "applies_when": "deploying",
                "steps": ["build", ""],
                "confidence": 7,
                "scopes": ["nowhere"],
                "replaces": [0],
            },
            OWNER,
            OWNER_GRANT,
        )
    fields = info.value.details["fields"]
    assert set(fields) == {"steps.1", "confidence", "scopes.0", "replaces.0"}
    assert "nowhere" not in str(info.value.to_dict())
    with pytest.raises(InvalidInputError):
        engine.dispatch("memory.save", ["not", "an", "object"], OWNER, OWNER_GRANT)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError) as info:
        engine.dispatch("memory.search", {"query": "x", "command_id": "c"}, OWNER, OWNER_GRANT)
    assert info.value.details["fields"] == ["command_id"]


def test_dispatch_async_does_not_block_the_loop(engine: Engine) -> None:
    release = threading.Event()
    released_in_time: list[bool] = []

    def hold_writer(changes: ChangeSet) -> None:
        released_in_time.append(release.wait(timeout=20))

    unsubscribe = engine.subscribe(hold_writer)

    async def scenario() -> dict:
        task = asyncio.create_task(
            engine.dispatch_async(
                "memory.save", {"kind": "fact", "summary": "async"}, OWNER, OWNER_GRANT
            )
        )
        await asyncio.sleep(0)
        release.set()  # only runs if the loop is free while the save is in flight
        return await asyncio.wait_for(task, timeout=30)

    receipt = asyncio.run(scenario())
    unsubscribe()
    assert released_in_time == [True]
    assert receipt["status"] == "active"


def test_subscribers_get_one_change_set_per_commit(engine: Engine) -> None:
    seen: list[ChangeSet] = []
    unsubscribe = engine.subscribe(seen.append)
    proposal = save(engine, "Prefer dark mode", "preference", session=AGENT, grant=agent_grant())
    approved = engine.dispatch(
        "review.approve", {"id": proposal["judgment_id"]}, OWNER, OWNER_GRANT
    )
    engine.dispatch(
        "memory.purge", {"id": proposal["judgment_id"], "reason": "forget"}, OWNER, OWNER_GRANT
    )
    assert [c.action for c in seen] == ["memory.save", "review.approve", "memory.purge"]
    assert seen[0].added == (proposal["judgment_id"],)
    assert seen[0].event_ids == (proposal["event_id"],)
    assert seen[1].status_changed == (proposal["judgment_id"],)
    assert seen[1].command_id == approved["command_id"]
    assert seen[2].purged == (proposal["judgment_id"],)
    # A replay commits nothing and notifies nobody; after unsubscribe, silence.
    engine.dispatch(
        "review.approve",
        {"id": proposal["judgment_id"], "command_id": approved["command_id"]},
        OWNER,
        OWNER_GRANT,
    )
    assert len(seen) == 3
    unsubscribe()
    save(engine, "After unsubscribe")
    assert len(seen) == 3


def test_a_failing_subscriber_does_not_break_writes(engine: Engine) -> None:
    def broken(changes: ChangeSet) -> None:
        raise RuntimeError("subscriber bug")

    engine.subscribe(broken)
    assert save(engine, "Still saved")["status"] == "active"
    assert search_ids(engine, "saved") != []


def test_many_threads_share_one_writer(engine: Engine) -> None:
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(8):
                save(engine, f"thread {n} item {i} pangolin")
                search_ids(engine, "pangolin")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    assert len(search_ids(engine, "pangolin", limit=100)) == 32
    assert event_count(engine) == 32
    report = verify_store(engine.store.conn, engine.store.secret)
    assert report.ok, report.problems
